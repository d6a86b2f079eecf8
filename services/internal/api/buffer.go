package api

import (
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/gin-gonic/gin"
)

// requestBuffer gives every request a buffer of n bytes, touched page by
// page so that it counts in RSS, and held until the request ends: the Go
// shape of a large ThreadLocal (README, The pitfalls: 3). Multiplied by unbounded
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

// blockingSleep waits d in the nanosleep system call. The goroutine's OS
// thread is blocked in the kernel for the whole wait, so the scheduler must
// start another thread to run other goroutines.
func blockingSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(d.Nanoseconds())
	for {
		var left syscall.Timespec
		if err := syscall.Nanosleep(&ts, &left); err != syscall.EINTR {
			return
		}
		ts = left
	}
}
