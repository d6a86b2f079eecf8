package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/orderlab/orderlab/services/internal/live/swap"
)

// pools is the store's current pgxpool and the ones it replaced that are
// still closing (DB_MAX_CONNS and DB_MIN_CONNS change live: SetPoolSize),
// swapped as the model's generations are (services/internal/live/swap). A
// resize builds a new pool from the same configuration and swaps it in;
// new acquisitions go to the new pool at once, and the old one closes in
// the background: pgxpool's Close waits for its in-flight queries to give
// their connections back, so nothing enters a generation here.
type pools struct {
	gens   *swap.Value[*sizedPool]
	cfg    *pgxpool.Config // what every pool is built from, sizes aside
	resize sync.Mutex      // one SetPoolSize at a time
	// base holds the counters of the pools closed since the start, so that
	// the exported counters stay monotonic across a swap (collector.go).
	// Only gens' lock guards it: Closed writes it, Read reads it.
	base poolCounters
}

// sizedPool is one pool with the sizes it was built with.
type sizedPool struct {
	*pgxpool.Pool
	maxConns, minConns int32
}

func newSizedPool(ctx context.Context, cfg *pgxpool.Config) (*sizedPool, error) {
	p, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &sizedPool{Pool: p, maxConns: cfg.MaxConns, minConns: cfg.MinConns}, nil
}

// newPools swaps pools starting from first: a pool closes at once (its Close
// waits for its connections), and its counters move into base as it leaves
// the open ones.
func newPools(first *sizedPool, cfg *pgxpool.Config) *pools {
	ps := &pools{cfg: cfg}
	ps.gens = swap.New(first, swap.Options[*sizedPool]{
		Close:  func(_ context.Context, p *sizedPool) error { p.Close(); return nil },
		Closed: func(p *sizedPool, _ error) { ps.base.add(countersOf(p.Stat())) },
	})
	return ps
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

// stats reads every pool at once, under the lock that a closed pool's
// counters move into the base under (newPools): no figure is counted twice
// or missed while a pool closes.
func (ps *pools) stats() poolStats {
	var out poolStats
	read := func(p *sizedPool) {
		s := p.Stat()
		out.acquired += s.AcquiredConns()
		out.idle += s.IdleConns()
		out.constructing += s.ConstructingConns()
		out.total += s.TotalConns()
		out.counters.add(countersOf(s))
	}
	ps.gens.Read(func(cur *sizedPool, closing []*sizedPool) {
		out.counters = ps.base
		read(cur)
		out.max = cur.maxConns
		for _, p := range closing {
			read(p)
		}
	})
	return out
}

// pool is the pool that new acquisitions use.
func (s *Store) pool() *pgxpool.Pool { return s.pools.gens.Current().Pool }

// PoolSize is the current pool's DB_MAX_CONNS and DB_MIN_CONNS.
func (s *Store) PoolSize() (maxConns, minConns int) {
	p := s.pools.gens.Current()
	return int(p.maxConns), int(p.minConns)
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
	ps := s.pools
	ps.resize.Lock()
	defer ps.resize.Unlock()
	if cur := ps.gens.Current(); int(cur.maxConns) == maxConns && int(cur.minConns) == minConns {
		return nil
	}
	cfg := ps.cfg.Copy()
	cfg.MaxConns, cfg.MinConns = int32(maxConns), int32(minConns)
	p, err := newSizedPool(ctx, cfg)
	if err != nil {
		return fmt.Errorf("pool size: create pool: %w", err)
	}
	old, err := ps.gens.Swap(p)
	if err != nil {
		p.Close()
		return errStoreClosed
	}
	// After the swap, release keeps no connection of old (leak.go), so
	// these are all of old's leaked ones, which its Close waits for.
	s.leak.releaseFrom(old.Pool)
	return nil
}

// close closes the current pool and waits for the replaced ones to close.
func (ps *pools) close() { _ = ps.gens.Close(context.Background()) }
