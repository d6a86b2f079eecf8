package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// pools is the store's current pgxpool and the ones it replaced that are
// still closing (DB_MAX_CONNS and DB_MIN_CONNS change live: SetPoolSize).
// A resize builds a new pool from the same configuration and swaps it in;
// new acquisitions go to the new pool at once, and the old one closes in
// the background once its in-flight queries have given their connections
// back.
type pools struct {
	cur atomic.Pointer[generation]
	cfg *pgxpool.Config // what every pool is built from, sizes aside

	mu       sync.Mutex
	closed   bool
	retiring map[*generation]struct{}
	// base holds the counters of the pools closed since the start, so that
	// the exported counters stay monotonic across a swap (collector.go).
	base     poolCounters
	retirees sync.WaitGroup
}

// generation is one pool with the sizes it was built with.
type generation struct {
	*pgxpool.Pool
	maxConns, minConns int32
}

func newGeneration(ctx context.Context, cfg *pgxpool.Config) (*generation, error) {
	p, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &generation{Pool: p, maxConns: cfg.MaxConns, minConns: cfg.MinConns}, nil
}

// poolCounters are pgxpool.Stat's cumulative figures.
type poolCounters struct {
	acquires, emptyAcquires, canceled int64
	acquireDur, emptyWait             time.Duration
}

func countersOf(s *pgxpool.Stat) poolCounters {
	return poolCounters{
		acquires: s.AcquireCount(), emptyAcquires: s.EmptyAcquireCount(), canceled: s.CanceledAcquireCount(),
		acquireDur: s.AcquireDuration(), emptyWait: s.EmptyAcquireWaitTime(),
	}
}

func (c *poolCounters) add(o poolCounters) {
	c.acquires += o.acquires
	c.emptyAcquires += o.emptyAcquires
	c.canceled += o.canceled
	c.acquireDur += o.acquireDur
	c.emptyWait += o.emptyWait
}

// poolStats is what the collector exports: the gauges of every open pool
// (the connections of a closing pool are still connections to Postgres),
// the current pool's size limit, and the counters of every pool since the
// start.
type poolStats struct {
	acquired, idle, constructing, total, max int32
	counters                                 poolCounters
}

// stats reads every pool at once, under the lock that a retiring pool
// takes to move its counters into the base: no figure is counted twice or
// missed while a pool closes.
func (ps *pools) stats() poolStats {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	out := poolStats{counters: ps.base}
	read := func(p *generation) {
		s := p.Stat()
		out.acquired += s.AcquiredConns()
		out.idle += s.IdleConns()
		out.constructing += s.ConstructingConns()
		out.total += s.TotalConns()
		out.counters.add(countersOf(s))
	}
	cur := ps.cur.Load()
	read(cur)
	out.max = cur.maxConns
	for p := range ps.retiring {
		read(p)
	}
	return out
}

// pool is the pool that new acquisitions use.
func (s *Store) pool() *pgxpool.Pool { return s.pools.cur.Load().Pool }

// PoolSize is the current pool's DB_MAX_CONNS and DB_MIN_CONNS.
func (s *Store) PoolSize() (maxConns, minConns int) {
	g := s.pools.cur.Load()
	return int(g.maxConns), int(g.minConns)
}

// ValidatePoolSize says whether maxConns and minConns make a pool: at least
// one connection, and no more kept open than allowed.
func ValidatePoolSize(maxConns, minConns int) error {
	switch {
	case maxConns < 1:
		return fmt.Errorf("pool size: DB_MAX_CONNS must be at least 1, got %d", maxConns)
	case minConns < 0:
		return fmt.Errorf("pool size: DB_MIN_CONNS must not be negative, got %d", minConns)
	case minConns > maxConns:
		return fmt.Errorf("pool size: DB_MIN_CONNS %d is above DB_MAX_CONNS %d", minConns, maxConns)
	case maxConns > 1<<20:
		return fmt.Errorf("pool size: DB_MAX_CONNS %d is beyond any server's max_connections", maxConns)
	}
	return nil
}

// errStoreClosed is a resize after Close.
var errStoreClosed = errors.New("pool size: the store is closed")

// SetPoolSize replaces the pool with one of maxConns and minConns
// connections built from the same configuration. New acquisitions go to the
// new pool at once; the old one keeps serving the calls that hold its
// connections, gives back the connections leaked from it (LEAK_EVERY), and
// closes in the background when the last of them is released. Unchanged
// sizes change nothing. A bad size is an error and changes nothing.
func (s *Store) SetPoolSize(ctx context.Context, maxConns, minConns int) error {
	if err := ValidatePoolSize(maxConns, minConns); err != nil {
		return err
	}
	ps := &s.pools
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.closed {
		return errStoreClosed
	}
	old := ps.cur.Load()
	if int(old.maxConns) == maxConns && int(old.minConns) == minConns {
		return nil
	}
	cfg := ps.cfg.Copy()
	cfg.MaxConns, cfg.MinConns = int32(maxConns), int32(minConns)
	g, err := newGeneration(ctx, cfg)
	if err != nil {
		return fmt.Errorf("pool size: create pool: %w", err)
	}
	ps.retiring[old] = struct{}{}
	ps.cur.Store(g)
	// After the swap, release keeps no connection of old (leak.go), so
	// these are all of old's leaked ones.
	s.leak.releaseFrom(old.Pool)
	ps.retirees.Go(func() {
		old.Close() // waits for the connections in use to be released
		ps.mu.Lock()
		defer ps.mu.Unlock()
		ps.base.add(countersOf(old.Stat()))
		delete(ps.retiring, old)
	})
	return nil
}

// close closes the current pool and waits for the retiring ones to close.
func (ps *pools) close() {
	ps.mu.Lock()
	ps.closed = true
	ps.mu.Unlock()
	ps.cur.Load().Close()
	ps.retirees.Wait()
}
