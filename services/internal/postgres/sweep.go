package postgres

import (
	"context"
	"sync"
	"time"
)

// sweeper drops the dead connections among the pool's idle ones as soon as
// one connection is found broken. A killed set of backends, a restarted or
// unreachable server breaks them all at once; without a sweep, each would
// stay in the pool until a request takes it and pays for the discovery, and
// the idle ones at the bottom of the pool's stack could stay dead for its
// whole idle lifetime. shouldPing covers the connections returned between
// the failure and the sweep.
type sweeper struct {
	mu      sync.Mutex
	running bool
	closed  bool
	wg      sync.WaitGroup
}

// sweepTimeout bounds each ping of a sweep: a live connection answers in
// milliseconds, a silent peer never does.
const sweepTimeout = time.Second

// sweep starts a sweep unless one runs or the store is closing: it takes
// every idle connection, pings them all at once, and gives them back; pgx
// closes a connection whose ping fails, and the pool destroys it on release.
func (s *Store) sweep() {
	w := &s.sweeper
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.running || w.closed {
		return
	}
	w.running = true
	w.wg.Go(func() {
		defer func() {
			w.mu.Lock()
			w.running = false
			w.mu.Unlock()
		}()
		ctx, cancel := context.WithTimeout(context.Background(), sweepTimeout)
		defer cancel()
		var pings sync.WaitGroup
		for _, c := range s.pool().AcquireAllIdle(ctx) {
			pings.Go(func() {
				defer c.Release()
				_ = c.Ping(ctx)
			})
		}
		pings.Wait()
	})
}

// close stops new sweeps and waits for the one running.
func (w *sweeper) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.wg.Wait()
}
