package api

import (
	"fmt"
	"runtime"
	rtmetrics "runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/orderlab/orderlab/internal/poll"
)

// blockingSleep waits its whole duration and holds an OS thread while it
// waits, on every platform (blocksleep.go): while n of them run, the
// process has at least n threads, and where the wait is a system call
// (Linux, the BSDs, macOS) n goroutines are outside Go, in the kernel. The
// threads are counted while the waits run, not as created: a thread
// outlives its wait and is reused by the next run (-count=2).
func TestBlockingSleepHoldsAThread(t *testing.T) {
	const n, d = 16, 3 * time.Second
	start := time.Now()
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { blockingSleep(d) })
	}
	samples := []rtmetrics.Sample{{Name: "/sched/threads/total:threads"}, {Name: "/sched/goroutines/not-in-go:goroutines"}}
	inKernel := runtime.GOOS == "linux" || runtime.GOOS == "darwin" || runtime.GOOS == "freebsd" ||
		runtime.GOOS == "netbsd" || runtime.GOOS == "openbsd"
	poll.Until(t, d, fmt.Sprintf("%d threads held by %d blocking sleeps", n, n), func() error {
		rtmetrics.Read(samples)
		threads, outside := samples[0].Value.Uint64(), samples[1].Value.Uint64()
		if threads < n || (inKernel && outside < n) {
			return fmt.Errorf("%d threads, %d goroutines outside Go", threads, outside)
		}
		return nil
	})
	wg.Wait()
	if took := time.Since(start); took < d {
		t.Errorf("%d blocking sleeps of %v took %v", n, d, took)
	}
}
