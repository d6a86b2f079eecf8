package tasks

import (
	"crypto/sha256"
	"sync/atomic"
	"time"
)

// Job is one unit of background work.
type Job func()

// Sleep is a job that waits d without holding a thread: the goroutine
// parks on a timer, as a virtual thread parks on blocking I/O.
func Sleep(d time.Duration) Job {
	return func() { time.Sleep(d) }
}

// SHA256Chain is a job that chains rounds SHA-256 hashes, as GET /work/cpu
// does: pure CPU work.
func SHA256Chain(rounds int) Job {
	return func() {
		var sum [sha256.Size]byte
		for range rounds {
			sum = sha256.Sum256(sum[:])
		}
		sink.Add(uint32(sum[0]))
	}
}

// sink keeps the compiler from dropping the hashes (atomic: jobs run in parallel).
var sink atomic.Uint32
