package attack

import (
	"context"
	"sync"
	"time"
)

// burst releases Concurrency requests at one instant and returns that
// instant. With Warmup, an untimed round of the same size goes first, so
// that the timed round reuses open keep-alive connections rather than
// measuring connection setup (as the published experiment of burst-1000 did:
// docs/scenarios/burst-1000.md).
func (a *Attack) burst(ctx context.Context, tr Transport) time.Time {
	workers := make([]*worker, a.cfg.Concurrency)
	for i := range workers {
		workers[i] = a.newWorker(i, tr)
	}
	defer func() {
		for _, w := range workers {
			w.close()
		}
	}()
	if a.cfg.Warmup {
		warm := newRecorder()
		release(workers, func(w *worker, at time.Time) { w.fire(ctx, warm, at, at, false) })
		a.groups[0].mu.Lock()
		a.groups[0].res.WarmupErrors += warm.res.ErrorCount()
		a.groups[0].mu.Unlock()
	}
	if ctx.Err() != nil {
		return time.Now()
	}
	a.released() // after the warm-up: a baseline taken here leaves it out
	return release(workers, func(w *worker, at time.Time) {
		w.fire(ctx, w.rec, at, at, false)
	}, a.markStarted)
}

// release starts one goroutine per worker, lets them all call fire at the
// same instant and waits for them. It returns the instant, after passing
// it to each of onRelease.
func release(workers []*worker, fire func(*worker, time.Time), onRelease ...func(time.Time)) time.Time {
	var ready, done sync.WaitGroup
	gate := make(chan struct{})
	var at time.Time
	for _, w := range workers {
		ready.Add(1)
		done.Go(func() {
			ready.Done()
			<-gate
			fire(w, at)
		})
	}
	ready.Wait()
	at = time.Now() // written before close(gate), read after it
	for _, f := range onRelease {
		f(at)
	}
	close(gate)
	done.Wait()
	return at
}
