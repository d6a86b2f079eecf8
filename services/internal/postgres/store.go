// Package postgres owns everything the services say to Postgres: the pool and
// its instrumentation, the embedded migrations and every SQL statement.
//
// The files follow the operations: orders.go (placing orders, one or a
// batch, and downstream.go for a transaction that waits for a downstream
// call), reads.go (an order by id), hold.go (connections held with
// pg_sleep); under them, this file (the pool, acquire, Ping), errors.go
// (the class of every error) and retry.go (when a failed call is sent
// again).
package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/orderlab/orderlab/internal/pgdb"
	"github.com/orderlab/orderlab/services/internal/dberr"
	"github.com/orderlab/orderlab/services/internal/telemetry"
)

// Config says how to reach Postgres and how large the pool is.
type Config struct {
	URL      string
	MaxConns int32
	MinConns int32
	// StartupTimeout bounds how long Open waits for the database to answer.
	StartupTimeout time.Duration
	// ApplicationName names the service's sessions in pg_stat_activity,
	// unless URL sets application_name.
	ApplicationName string
	// LeakEvery, when positive, makes every LeakEvery-th database call keep
	// its connection instead of releasing it (LEAK_EVERY; leak.go).
	LeakEvery int
}

// Store runs the services' SQL over an instrumented pgx pool. It classifies
// every database error (dberr.Class, in errors.go) and retries what is safe
// to retry (retry.go).
type Store struct {
	pools  *pools // the pool, and the ones a resize replaced (pool.go)
	health *healthConn
	m      *metrics
	// brokenAt is when a connection was last found broken (Unix ns): the
	// pool pings every connection idle since before it (shouldPing).
	brokenAt atomic.Int64
	sweeper  sweeper
	tracer   *poolTracer
	leak     leak
}

// Open waits for the database (bounded, logged retries), applies the
// migrations and returns a Store whose pool metrics are registered on reg.
func Open(ctx context.Context, cfg Config, log *slog.Logger, reg prometheus.Registerer, tp trace.TracerProvider) (*Store, error) {
	pc, err := pgxpool.ParseConfig(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("parse DATABASE_URL: %s", pgdb.Describe(cfg.URL)) // err quotes it
	}
	pc.MaxConns = cfg.MaxConns
	pc.MinConns = cfg.MinConns
	// A deadline that passes mid-query closes that connection (pgx's
	// default). pgconn.CancelRequestContextWatcherHandler would keep it, but
	// holds it 100ms more after each cancel to avoid canceling the next
	// query: under starvation that costs the pool more than a reconnect.
	configureConn(pc.ConnConfig, cfg.ApplicationName)
	st := &Store{m: newMetrics()}
	st.SetLeakEvery(cfg.LeakEvery)
	pc.ShouldPing = st.shouldPing
	pc.PingTimeout = sweepTimeout
	healthCfg := pc.ConnConfig.Copy()

	conn, err := connectWithRetry(ctx, healthCfg, cfg.StartupTimeout, log)
	if err != nil {
		return nil, err
	}
	if err := Migrate(ctx, conn, log); err != nil {
		_ = conn.Close(context.WithoutCancel(ctx))
		return nil, err
	}

	tracer := newPoolTracer(tp)
	pc.ConnConfig.Tracer = tracer
	pc.BeforeClose = func(c *pgx.Conn) { tracer.dialed.Delete(c) }
	st.tracer = tracer
	first, err := newSizedPool(ctx, pc)
	if err != nil {
		_ = conn.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("create pool: %w", err)
	}
	st.pools = newPools(first, pc)
	st.health = newHealthConn(healthCfg, conn)
	if err := telemetry.Register(reg, tracer, newStatsCollector(st.pools), newRoundTripCollector(st.health),
		st.m.errors, st.m.retries, st.m.tooManyClients); err != nil {
		first.Close()
		st.health.close() // closes conn; a scrape that raced in opens none
		return nil, err
	}
	return st, nil
}

// shouldPing is the pool's ShouldPing: besides pgxpool's default (a
// connection idle for over a second), it pings every connection that has
// been idle since before a connection was last found broken. A killed
// backend or a restarted server breaks all of them at once, and a ping is
// cheaper than a request that fails on one: a dead connection is dropped
// at acquire, before anything is sent on it.
func (s *Store) shouldPing(_ context.Context, p pgxpool.ShouldPingParams) bool {
	if p.IdleDuration > time.Second {
		return true
	}
	broken := s.brokenAt.Load()
	return broken != 0 && p.IdleDuration >= time.Duration(nowNano()-broken)
}

// connectWithRetry dials until the database answers or timeout passes,
// backing off from 100ms to 2s and logging each failure.
func connectWithRetry(ctx context.Context, cfg *pgx.ConnConfig, timeout time.Duration, log *slog.Logger) (*pgx.Conn, error) {
	deadline := time.Now().Add(timeout)
	backoff := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, 5*time.Second)
		conn, err := pgx.ConnectConfig(actx, cfg)
		cancel()
		if err == nil {
			return conn, nil
		}
		if ctx.Err() != nil || time.Now().Add(backoff).After(deadline) {
			return nil, fmt.Errorf("database not reachable after %d attempts in %s: %w", attempt, timeout, err)
		}
		log.Warn("database not reachable yet", "attempt", attempt, "retry_in", backoff.String(), "err", err)
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		backoff = min(backoff*2, 2*time.Second)
	}
}

// Close closes the pool, the pools a resize replaced that are still
// closing, and the health connection. Connections leaked on purpose
// (LEAK_EVERY) are given back first: pgxpool's Close waits for every
// acquired connection.
func (s *Store) Close() {
	s.sweeper.close()
	s.leak.releaseFrom(nil)
	s.pools.close()
	s.health.close()
}

// Ping says whether Postgres answers. It uses a connection of its own, so a
// starved pool does not make the service look unreachable. Its error is a
// *dberr.Error of class Unavailable.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.health.ping(ctx); err != nil {
		return &dberr.Error{Class: dberr.Unavailable, Err: err}
	}
	return nil
}

// acquire takes a pooled connection; when ctx's deadline passes while it
// waits, the error is of class dberr.PoolExhausted and says how long, and
// when no connection can be had, of class dberr.Unavailable.
//
// A retry passes the time of its failure as after, and gets a connection
// that began to connect since: an older one may belong to the same fault
// still unfolding (a backend that a kill or a shutdown has signalled, and
// that answers a ping or finishes its start-up before it dies). The older
// idle ones it meets are closed.
//
// A pool that a resize replaced while the call waited in it (closing it
// ends its waits and its connects) sends the call to the new pool.
func (s *Store) acquire(ctx context.Context, after time.Time) (*pgxpool.Conn, error) {
	start := time.Now()
	p := s.pools.gens.Current()
	for range p.maxConns + 1 {
		c, err := p.Acquire(ctx)
		if err != nil {
			if cur := s.pools.gens.Current(); cur != p && ctx.Err() == nil {
				p = cur
				continue
			}
			if ctx.Err() != nil {
				if errors.Is(ctx.Err(), context.DeadlineExceeded) {
					return nil, &dberr.Error{Class: dberr.PoolExhausted, Waited: time.Since(start),
						Err: fmt.Errorf("acquire connection: %w", ctx.Err())}
				}
				return nil, ctx.Err()
			}
			return nil, s.classified(ctx, fmt.Errorf("acquire connection: %w", err), connecting, true)
		}
		if after.IsZero() || s.tracer.dialedAfter(c.Conn(), after) {
			return c, nil
		}
		_ = c.Conn().Close(ctx) // the pool drops a closed connection on release
		c.Release()
	}
	return nil, s.classified(ctx, errors.New("acquire connection: no connection opened since the failure"), connecting, true)
}
