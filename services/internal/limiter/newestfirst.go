package limiter

import (
	"context"

	"github.com/orderlab/orderlab/services/internal/gate"
)

// newestFirst is LIMIT=n with LIMIT_ORDER=lifo: n permits, a freed one
// going to the request that began waiting last. x/sync's semaphore serves
// its waiters in arrival order only, hence the hand-written gate here.
// Under a sustained overload a queue served in arrival order is always
// full, so every request it admits has waited nearly as long as a waiter
// may; served newest first, the requests it admits have hardly waited, and
// the ones that wait out their time are the ones refused
// (docs/admission.md).
type newestFirst struct{ g *gate.Gate }

func newNewestFirst(n int) *newestFirst {
	g := gate.New(n)
	g.SetOrder(true)
	return &newestFirst{g: g}
}

func (f *newestFirst) release(bool) { f.g.Release() }

func (f *newestFirst) tryAcquire() (func(bool), bool) {
	if !f.g.TryAcquire() {
		return nil, false
	}
	return f.release, true
}

func (f *newestFirst) acquire(ctx context.Context) (func(bool), error) {
	if err := f.g.Acquire(ctx); err != nil {
		return nil, err
	}
	return f.release, nil
}

func (f *newestFirst) limit() int { return f.g.Size() }
