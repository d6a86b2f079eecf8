package attack

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// closed runs Concurrency workers in request loops until the request count
// or the duration is used up, and returns the start time.
func (a *Attack) closed(ctx context.Context, tr Transport) time.Time {
	a.released()
	start := time.Now()
	a.markStarted(start)
	end := start.Add(a.cfg.Duration)
	var claimed atomic.Int64
	claim := func() bool {
		if ctx.Err() != nil {
			return false
		}
		if a.cfg.Requests > 0 && claimed.Add(1) > a.cfg.Requests {
			return false
		}
		return a.cfg.Duration <= 0 || time.Now().Before(end)
	}
	var wg sync.WaitGroup
	for id := range a.cfg.Concurrency {
		wg.Go(func() {
			w := a.newWorker(id, tr)
			defer w.close()
			for claim() {
				// In a closed loop a request is due when its worker is free.
				w.fire(ctx, w.rec, time.Now(), false)
			}
		})
	}
	wg.Wait()
	return start
}
