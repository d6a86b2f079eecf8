package api

import (
	"runtime"
	"sync"

	"github.com/gin-gonic/gin"
)

// requestBuffer gives every request a buffer of n bytes, touched page by
// page so that it counts in RSS, and held until the request ends: the Go
// shape of a large ThreadLocal (docs/scenarios: per-request-memory). Multiplied by unbounded
// concurrency it is the memory bloat; pooled, sync.Pool reuses buffers
// between requests instead of allocating one each time.
func requestBuffer(n int, pooled bool) gin.HandlerFunc {
	pool := sync.Pool{New: func() any { b := make([]byte, n); return &b }}
	return func(c *gin.Context) {
		var b *[]byte
		if pooled {
			b = pool.Get().(*[]byte)
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
