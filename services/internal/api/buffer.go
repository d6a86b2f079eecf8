package api

import (
	"runtime"
	"sync"
)

// buffers give every request a buffer of REQUEST_BUFFER_BYTES, touched
// page by page so that it counts in RSS, and held until the request ends:
// the Go shape of a large ThreadLocal (docs/scenarios: per-request-memory).
// Multiplied by unbounded concurrency it is the memory bloat; pooled
// (REQUEST_BUFFER_POOL), sync.Pool reuses buffers between requests instead
// of allocating one each time. Both knobs are read per request; a pooled
// buffer of another size than the knob's is dropped.
type buffers struct{ pool sync.Pool }

// hold gives the request its buffer as k says; the returned func ends the
// hold.
func (b *buffers) hold(k *Config) (release func()) {
	n, pooled := k.BufferBytes, k.BufferPooled
	if n <= 0 {
		return noBuffer
	}
	var buf *[]byte
	if pooled {
		buf, _ = b.pool.Get().(*[]byte)
	}
	if buf == nil || len(*buf) != n {
		fresh := make([]byte, n)
		buf = &fresh
	}
	for i := 0; i < len(*buf); i += 4096 {
		(*buf)[i] = 1
	}
	return func() {
		runtime.KeepAlive(buf)
		if pooled {
			b.pool.Put(buf)
		}
	}
}

func noBuffer() {}
