package attack

import (
	"context"
	"sync"
	"time"
)

// idleOpeners is how many connections an idle run opens at once: enough to
// open tens of thousands in seconds, few enough not to overflow the
// server's accept queue.
const idleOpeners = 64

// idle opens Concurrency keep-alive connections, each with one request, then
// holds them open without a request for Duration after the last answer, and
// returns the start time. The baseline (OnRelease) is taken before the first
// connection opens, so that a server's growth over it is what the open
// connections cost. The measured time is the opening; the connections close
// when the hold ends (or ctx does).
func (a *Attack) idle(ctx context.Context, tr Transport) time.Time {
	a.released()
	start := time.Now()
	a.markStarted(start)
	workers := make([]*worker, a.cfg.Concurrency)
	for i := range workers {
		workers[i] = a.newWorker(i, tr)
	}
	defer func() {
		for _, w := range workers {
			w.close()
		}
	}()
	next := make(chan *worker)
	var wg sync.WaitGroup
	for range min(idleOpeners, len(workers)) {
		wg.Go(func() {
			for w := range next {
				w.fire(ctx, w.rec, time.Now(), time.Time{}, false)
			}
		})
	}
	for _, w := range workers {
		if ctx.Err() != nil {
			break
		}
		next <- w
	}
	close(next)
	wg.Wait()
	hold := time.NewTimer(a.cfg.Duration)
	defer hold.Stop()
	select {
	case <-hold.C:
	case <-ctx.Done():
	}
	return start
}
