package api

import (
	"runtime/pprof"
	"sync"
	"testing"
	"time"
)

// blockingSleep waits its whole duration and holds an OS thread while it
// waits, on every platform (blocksleep.go): n concurrent waits make the
// runtime start threads, where n time.Sleeps would start none.
func TestBlockingSleepHoldsAThread(t *testing.T) {
	const n, d = 48, 300 * time.Millisecond
	threads := pprof.Lookup("threadcreate")
	before := threads.Count()
	start := time.Now()
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { blockingSleep(d) })
	}
	wg.Wait()
	if took := time.Since(start); took < d {
		t.Errorf("%d blocking sleeps of %v took %v", n, d, took)
	}
	if created := threads.Count() - before; created < n/2 {
		t.Errorf("%d concurrent blocking sleeps started %d OS threads, want at least %d", n, created, n/2)
	}
}
