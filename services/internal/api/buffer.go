package api

import (
	"runtime"
	"sync"

	"github.com/gin-gonic/gin"
)

// requestBuffer gives every request a buffer of REQUEST_BUFFER_BYTES,
// touched page by page so that it counts in RSS, and held until the request
// ends: the Go shape of a large ThreadLocal (README, The pitfalls: 3).
// Multiplied by unbounded concurrency it is the memory bloat; pooled
// (REQUEST_BUFFER_POOL), sync.Pool reuses buffers between requests instead
// of allocating one each time. Both knobs are read per request; a pooled
// buffer of another size than the knob's is dropped.
func requestBuffer(knobs *Knobs) gin.HandlerFunc {
	var pool sync.Pool
	return func(c *gin.Context) {
		k := knobs.Load()
		n, pooled := k.BufferBytes, k.BufferPooled
		if n <= 0 {
			c.Next()
			return
		}
		var b *[]byte
		if pooled {
			if got, ok := pool.Get().(*[]byte); ok && len(*got) == n {
				b = got
			} else {
				buf := make([]byte, n)
				b = &buf
			}
		} else {
			buf := make([]byte, n)
			b = &buf
		}
		for i := 0; i < len(*b); i += 4096 {
			(*b)[i] = 1
		}
		c.Next()
		runtime.KeepAlive(b)
		if pooled {
			pool.Put(b)
		}
	}
}
