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
	if a.cfg.Duration > 0 {
		a.sendUntil = end
	}
	var claimed atomic.Int64
	claim := func(now time.Time) bool {
		if ctx.Err() != nil {
			return false
		}
		if a.cfg.Requests > 0 && claimed.Add(1) > a.cfg.Requests {
			return false
		}
		return a.cfg.Duration <= 0 || now.Before(end)
	}
	var wg sync.WaitGroup
	for id := range a.cfg.Concurrency {
		wg.Go(func() {
			w := a.newWorker(id, tr)
			defer w.close()
			// In a closed loop a request is due when its worker is free;
			// the generator meant to send it when the previous answer came.
			for now := time.Now(); claim(now); now = time.Now() {
				w.fire(ctx, w.rec, now, w.answered, false)
			}
		})
	}
	wg.Wait()
	return start
}
