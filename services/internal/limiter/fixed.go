package limiter

import (
	"context"

	"golang.org/x/sync/semaphore"
)

// fixed is LIMIT=n: n permits of golang.org/x/sync's semaphore, whose
// waiters are served in arrival order.
type fixed struct {
	sem *semaphore.Weighted
	n   int
}

func newFixed(n int) *fixed { return &fixed{sem: semaphore.NewWeighted(int64(n)), n: n} }

func (f *fixed) release(bool) { f.sem.Release(1) }

func (f *fixed) tryAcquire() (func(bool), bool) {
	if !f.sem.TryAcquire(1) {
		return nil, false
	}
	return f.release, true
}

func (f *fixed) acquire(ctx context.Context) (func(bool), error) {
	if err := f.sem.Acquire(ctx, 1); err != nil {
		return nil, err
	}
	return f.release, nil
}

func (f *fixed) limit() int { return f.n }
