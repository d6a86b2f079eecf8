package attack

import (
	"context"
	"runtime"
	"time"
)

// waitUntil waits until due (an open run's intended send time) or until
// ctx is done, and reports whether due came. It waits on the kernel's
// timer where there is one (see preciseTimer), so that the generator's own
// lateness stays in microseconds at low rates without spinning. A woken
// thread still takes some microseconds to run; the worker asks to be woken
// that much early (w.early, the median overshoot of its wakes) and yields the
// processor until due, but only while that is small and for at most a tenth
// of the wait, so that yielding never takes much of a core: on an overloaded
// machine it would take CPU from everything else without helping.
//
// With exact false it only waits for the kernel's timer, without the early
// wake and the yield: the caller accepts the wake's overshoot (batched
// ticks, see batchTick).
func (w *worker) waitUntil(ctx context.Context, due time.Time, exact bool) bool {
	if !w.tried && !w.a.cfg.timerWaits {
		w.tried = true
		w.precise = newPreciseTimer(ctx)
	}
	if w.precise == nil {
		return w.sleep(ctx, time.Until(due))
	}
	wait := time.Until(due)
	if !exact {
		if wait <= 0 {
			return ctx.Err() == nil
		}
		return w.precise.wait(ctx, wait)
	}
	early := min(w.early, wait/10) // yielding at most a tenth of the wait
	if w.early > maxEarlyWake {
		early = 0
	}
	if d := wait - early; d > 0 {
		if !w.precise.wait(ctx, d) {
			return false
		}
		// Track the median overshoot past the requested wake: a step of
		// 1/16 up when above it, down when below (a heavy tail of
		// preemptions moves a median, unlike a mean, only one step).
		step := max(w.early/16, time.Microsecond)
		if time.Since(due.Add(-early)) > w.early {
			w.early += step
		} else {
			w.early = max(0, w.early-step)
		}
	}
	for time.Now().Before(due) {
		runtime.Gosched()
	}
	return ctx.Err() == nil
}

// maxEarlyWake is the most a worker wakes early to yield until its due
// time; beyond it, wakes are left late (see waitUntil).
const maxEarlyWake = 200 * time.Microsecond

// sleep waits d or until ctx is done, and reports whether d passed.
func (w *worker) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	if w.timer == nil {
		w.timer = time.NewTimer(d)
	} else {
		w.timer.Reset(d)
	}
	select {
	case <-w.timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}
