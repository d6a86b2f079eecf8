package attack

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// open sends request i at start+Pacer.Due(i), whatever happened to the
// requests before it, and returns the start time.
//
// Workers take the next request number from a shared counter, so whichever
// worker is free sends the next due request. A worker that finds its
// request already due (no worker was free when it fell due) sends it at
// once and counts it late; its corrected latency still starts at the due
// time, which is what makes the run coordinated-omission correct. The pool
// starts with one worker and grows, up to Concurrency, whenever a worker
// goes to send and no other is waiting for the next request, so a fast
// target keeps few connections and a stalled one gets as many as allowed.
//
// When the window closes, requests that fell due within it and are still
// waiting for a connection are not dropped: the workers drain them, each
// measured from its due time, for at most Timeout after the end. What is
// left then has waited longer than a request may take, and is counted
// unsent (see [Attack.Run]), which the report counts as errors: a stall at
// the end of the run shows either in the latencies or as errors.
//
// With a Shard, the run sends only its share of the schedule, each request
// at the time the whole schedule has it due.
//
// Where requests fall due less than batchSpacing apart, workers wake on a
// grid of batchTick from the start rather than at each due time: the
// requests of one tick leave together, so one wake of the process sends
// several, and their answers tend to arrive together too.
func (a *Attack) open(ctx context.Context, tr Transport) time.Time {
	a.released()
	start := time.Now().Add(time.Millisecond) // lets the first worker be on time
	a.markStarted(start)
	end := start.Add(a.cfg.Duration)
	if a.cfg.Duration > 0 {
		a.sendUntil = end
	}
	var giveUp time.Time // zero: drain without a bound (no timeout, or no window)
	if a.cfg.Duration > 0 && a.cfg.Timeout > 0 {
		giveUp = end.Add(a.cfg.Timeout)
	}
	pacer, limit := a.cfg.schedule()
	if limit <= 0 {
		limit = math.MaxInt64
	}
	var (
		next, waiting, spawned atomic.Int64
		wg                     sync.WaitGroup
	)
	var spawn func()
	spawn = func() {
		id := spawned.Add(1) - 1
		if id >= int64(a.cfg.Concurrency) {
			spawned.Add(-1)
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := a.newWorker(int(id), tr)
			defer w.close()
			for ctx.Err() == nil {
				i := next.Add(1) - 1
				if i >= limit {
					return
				}
				off := pacer.Due(i)
				due := start.Add(off)
				now := time.Now()
				if a.cfg.Duration > 0 && !due.Before(end) {
					return // past the schedule
				}
				if !giveUp.IsZero() && !now.Before(giveUp) {
					return // drained as long as allowed; the rest is unsent
				}
				late := now.After(due)
				if !late {
					waiting.Add(1)
					var ok bool
					if pacer.Due(i+1)-off < batchSpacing {
						// Due on the tick at or after due, with the other
						// requests of its tick (see batchTick).
						ok = w.waitUntil(ctx, start.Add((off+batchTick-1)/batchTick*batchTick), false)
					} else {
						ok = w.waitUntil(ctx, due, true)
					}
					waiting.Add(-1)
					if !ok {
						return
					}
				}
				if waiting.Load() == 0 {
					spawn()
				}
				w.fire(ctx, w.rec, due, due, late)
			}
		}()
	}
	spawn()
	wg.Wait()
	return start
}

// batchSpacing and batchTick: where an open run's requests fall due less
// than batchSpacing apart (above 10,000 requests/s), its workers wake on a
// grid of batchTick. Each wake of an idle process costs more than a
// request's own system calls (on the lab's virtual machine the context
// switches dominated the profile), so at 20,000/s sending the four requests
// of a tick together raised requests per client CPU-second by a fifth to two
// fifths over the two of a 100 µs tick, for a lateness of up to one tick
// (p50 about 120 µs, against a target of 200 µs; loadtest/README.md, "The
// pacer"). Below 10,000/s every request is woken for on its own, at its due
// time, and its lateness stays in microseconds.
const (
	batchSpacing = 100 * time.Microsecond
	batchTick    = 200 * time.Microsecond
)
