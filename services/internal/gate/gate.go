// Package gate is a counting semaphore whose waiters can be served newest
// first and whose size can change while it is in use: what
// golang.org/x/sync/semaphore cannot do. The semaphore service uses it for
// LIMIT_ORDER=lifo (services/internal/limiter, newestfirst.go) and for the
// adaptive limit on the pool, which moves its size every window
// (poolwait.go); a fixed limit served in arrival order is x/sync's. A
// smaller size revokes nothing: the permits held stay valid, and no new
// one is given until fewer than the new size are held.
package gate

import (
	"container/list"
	"context"
	"sync"
)

// Gate hands out up to Size permits at once.
type Gate struct {
	mu      sync.Mutex
	size    int
	held    int
	waiters list.List // of chan struct{}, closed when its permit is granted
	// newestFirst serves the waiter that came last first (LIFO).
	newestFirst bool
}

// New returns a Gate of size permits.
func New(size int) *Gate { return &Gate{size: size} }

// TryAcquire takes a permit if one is free and nobody waits for one.
func (g *Gate) TryAcquire() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.held < g.size && g.waiters.Len() == 0 {
		g.held++
		return true
	}
	return false
}

// Acquire waits for a permit until ctx ends; then it returns ctx's error
// and holds nothing.
func (g *Gate) Acquire(ctx context.Context) error {
	g.mu.Lock()
	if g.held < g.size && g.waiters.Len() == 0 {
		g.held++
		g.mu.Unlock()
		return nil
	}
	ready := make(chan struct{})
	e := g.waiters.PushBack(ready)
	g.mu.Unlock()
	select {
	case <-ready:
		return nil
	case <-ctx.Done():
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-ready: // granted as ctx ended: give it to the next in line
		g.held--
	default:
		g.waiters.Remove(e)
	}
	g.grant()
	return ctx.Err()
}

// Release gives a permit back.
func (g *Gate) Release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.held <= 0 {
		panic("gate: Release without a permit held")
	}
	g.held--
	g.grant()
}

// Resize sets the number of permits. Growing serves the waiters at once;
// shrinking keeps the permits held, and admits nobody until fewer than
// size are.
func (g *Gate) Resize(size int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.size = size
	g.grant()
}

// SetOrder says which waiter a freed permit goes to: the one that has
// waited longest (newestFirst false, the default), or the one that came
// last. Under a sustained overload a queue served in arrival order is
// always full, so every request it admits has waited nearly as long as a
// waiter may; served newest first, the requests it admits have hardly
// waited, and the ones that wait out their time are the ones refused.
func (g *Gate) SetOrder(newestFirst bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.newestFirst = newestFirst
}

// grant serves the waiters in order while permits are free.
func (g *Gate) grant() {
	for g.held < g.size {
		next := g.waiters.Front()
		if g.newestFirst {
			next = g.waiters.Back()
		}
		if next == nil {
			return
		}
		g.waiters.Remove(next)
		g.held++
		close(next.Value.(chan struct{}))
	}
}

// Size is the number of permits.
func (g *Gate) Size() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.size
}

// Held is the number of permits held now; above Size after a shrink until
// enough are released.
func (g *Gate) Held() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.held
}

// Waiting is the number of callers waiting in Acquire.
func (g *Gate) Waiting() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.waiters.Len()
}
