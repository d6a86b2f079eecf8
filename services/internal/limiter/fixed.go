package limiter

import (
	"context"

	"github.com/orderlab/orderlab/services/internal/gate"
)

// fixed is LIMIT=n: n permits whose waiters are served in arrival order,
// or newest first (LIMIT_ORDER).
// n changes live (resize): a smaller n revokes no permit held, and admits
// nobody until fewer than n are held.
type fixed struct {
	g *gate.Gate
}

func newFixed(n int) *fixed { return &fixed{g: gate.New(n)} }

func (f *fixed) release(bool) { f.g.Release() }

func (f *fixed) tryAcquire() (func(bool), bool) {
	if !f.g.TryAcquire() {
		return nil, false
	}
	return f.release, true
}

func (f *fixed) acquire(ctx context.Context) (func(bool), error) {
	if err := f.g.Acquire(ctx); err != nil {
		return nil, err
	}
	return f.release, nil
}

func (f *fixed) setOrder(newestFirst bool) { f.g.SetOrder(newestFirst) }

func (f *fixed) limit() int { return f.g.Size() }

func (f *fixed) resize(n int) { f.g.Resize(n) }
