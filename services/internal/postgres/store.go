// Package postgres owns everything the services say to Postgres: the pool and
// its instrumentation, the embedded migrations and every SQL statement.
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
	"github.com/orderlab/orderlab/services/internal/fault"
	"github.com/orderlab/orderlab/services/internal/order"
	"github.com/orderlab/orderlab/services/internal/overload"
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
// every database error (fault.Class, in errors.go) and retries what is safe
// to retry (retry.go).
type Store struct {
	pool   *pgxpool.Pool
	health *healthConn
	m      *metrics
	// brokenAt is when a connection was last found broken (Unix ns): the
	// pool pings every connection idle since before it (shouldPing).
	brokenAt atomic.Int64
	sweeper  sweeper
	tracer   *poolTracer
	maxConns int32
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
	st := &Store{m: newMetrics(), maxConns: pc.MaxConns, leak: leak{every: int64(cfg.LeakEvery)}}
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
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		_ = conn.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("create pool: %w", err)
	}
	if err := telemetry.Register(reg, tracer, newStatsCollector(pool), st.m.errors, st.m.retries); err != nil {
		pool.Close()
		_ = conn.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	st.pool, st.health = pool, &healthConn{cfg: healthCfg, conn: conn}
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

// Close closes the pool and the health connection. Connections leaked on
// purpose (LEAK_EVERY) are given back first: pgxpool's Close waits for
// every acquired connection.
func (s *Store) Close() {
	s.sweeper.close()
	s.leak.releaseAll()
	s.pool.Close()
	s.health.close()
}

// Ping says whether Postgres answers. It uses a connection of its own, so a
// starved pool does not make the service look unreachable. Its error is a
// *fault.Error of class Unavailable.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.health.ping(ctx); err != nil {
		return &fault.Error{Class: fault.Unavailable, Err: err}
	}
	return nil
}

// acquire takes a pooled connection; when ctx's deadline passes while it
// waits, the error is an *overload.PoolTimeoutError saying how long, and
// when no connection can be had, a *fault.Error of class Unavailable.
//
// A retry passes the time of its failure as after, and gets a connection
// that began to connect since: an older one may belong to the same fault
// still unfolding (a backend that a kill or a shutdown has signalled, and
// that answers a ping or finishes its start-up before it dies). The older
// idle ones it meets are closed.
func (s *Store) acquire(ctx context.Context, after time.Time) (*pgxpool.Conn, error) {
	start := time.Now()
	for range s.maxConns + 1 {
		c, err := s.pool.Acquire(ctx)
		if err != nil {
			if ctx.Err() != nil {
				if errors.Is(ctx.Err(), context.DeadlineExceeded) {
					return nil, &overload.PoolTimeoutError{Waited: time.Since(start)}
				}
				return nil, ctx.Err()
			}
			return nil, s.faultErr(ctx, fmt.Errorf("acquire connection: %w", err), connecting, true)
		}
		if after.IsZero() || s.tracer.dialedAfter(c.Conn(), after) {
			return c, nil
		}
		_ = c.Conn().Close(ctx) // the pool drops a closed connection on release
		c.Release()
	}
	return nil, s.faultErr(ctx, errors.New("acquire connection: no connection opened since the failure"), connecting, true)
}

// Result is the outcome of inserting one order.Request.
type Result struct {
	Order order.Order
	// Created is false when an earlier request with the same key and body
	// already created the order.
	Created bool
	Err     error
}

const insertOrderSQL = `
WITH o AS (
    INSERT INTO orders (customer_id, total_cents, idempotency_key, fingerprint)
    VALUES ($1, $2, $3, $4)
    ON CONFLICT (idempotency_key) DO NOTHING
    RETURNING id, created_at
), i AS (
    INSERT INTO order_items (order_id, line, sku, quantity, unit_price_cents)
    SELECT o.id, x.line, x.sku, x.quantity, x.price
    FROM o, unnest($5::text[], $6::int[], $7::bigint[]) WITH ORDINALITY AS x(sku, quantity, price, line)
)
SELECT id, created_at FROM o`

func insertArgs(n order.Request) []any {
	skus := make([]string, len(n.Input.Items))
	qty := make([]int32, len(n.Input.Items))
	price := make([]int64, len(n.Input.Items))
	for i, it := range n.Input.Items {
		skus[i], qty[i], price[i] = it.SKU, int32(it.Quantity), it.UnitPriceCents
	}
	var key *string
	if n.IdempotencyKey != "" {
		key = &n.IdempotencyKey
	}
	return []any{n.Input.CustomerID, n.TotalCents, key, n.Fingerprint, skus, qty, price}
}

// CreateOrder inserts one order and its items in one transaction. When delay
// is positive the transaction first runs pg_sleep, so that the request holds
// its connection that long, like a slow query; when downstream is positive
// the transaction also waits that long for a (simulated) downstream call,
// holding its connection (README, The pitfalls: 11). Errors are
// CreateOrders'.
func (s *Store) CreateOrder(ctx context.Context, n order.Request, delay, downstream time.Duration) (Result, error) {
	rs, err := s.CreateOrders(ctx, []order.Request{n}, delay, downstream)
	if err != nil {
		return Result{}, err
	}
	return rs[0], rs[0].Err
}

// createOrders is one attempt of CreateOrders (retry.go), on one pooled
// connection (opened after after, for a retry: see acquire).
//
// It sends one pgx Batch outside any explicit transaction: pgx documents
// that a batch then runs in one implicit transaction (its statements share
// a single Sync), which saves the BEGIN and COMMIT round trips that would
// otherwise lengthen every connection hold. After each keyed insert the
// batch also reads the order stored under that key: READ COMMITTED gives
// every statement a fresh snapshot, so the read sees the row the insert
// conflicted with, and a replay needs no second round trip after the commit.
//
// With downstream, the batch runs in an explicit transaction that first
// waits for the downstream call (txAcrossDownstream).
func (s *Store) createOrders(ctx context.Context, ns []order.Request, delay, downstream time.Duration, after time.Time) ([]Result, error) {
	conn, err := s.acquire(ctx, after)
	if err != nil {
		return nil, err
	}
	defer s.release(conn)

	b := ordersBatch(ns, delay)
	if downstream > 0 {
		return s.txAcrossDownstream(ctx, conn, b, ns, delay, downstream)
	}
	br := conn.SendBatch(ctx, b)
	results, err := readBatch(br, ns, delay)
	at := running
	if cerr := br.Close(); err == nil && cerr != nil {
		err, at = fmt.Errorf("insert orders: %w", cerr), committing
	}
	if err != nil {
		return nil, s.faultErr(ctx, err, at, conn.Conn().IsClosed())
	}
	return results, nil
}

// ordersBatch queues a pg_sleep of delay (when positive), then each order's
// insert and, for a keyed order, the read of the order stored under its key.
func ordersBatch(ns []order.Request, delay time.Duration) *pgx.Batch {
	var b pgx.Batch
	if delay > 0 {
		b.Queue("SELECT pg_sleep($1)", delay.Seconds())
	}
	for _, n := range ns {
		b.Queue(insertOrderSQL, insertArgs(n)...)
		if n.IdempotencyKey != "" {
			b.Queue(selectOrderSQL+"o.idempotency_key = $1", n.IdempotencyKey)
		}
	}
	return &b
}

func readBatch(br pgx.BatchResults, ns []order.Request, delay time.Duration) ([]Result, error) {
	if delay > 0 {
		if _, err := br.Exec(); err != nil {
			return nil, fmt.Errorf("pg_sleep: %w", err)
		}
	}
	results := make([]Result, len(ns))
	for i, n := range ns {
		var id int64
		var created time.Time
		switch err := br.QueryRow().Scan(&id, &created); {
		case err == nil:
			results[i] = Result{Created: true, Order: order.Order{
				ID: id, CustomerID: n.Input.CustomerID, Items: n.Input.Items,
				TotalCents: n.TotalCents, CreatedAt: created,
			}}
		case !errors.Is(err, pgx.ErrNoRows):
			return nil, fmt.Errorf("insert order: %w", err)
		}
		if n.IdempotencyKey == "" {
			continue
		}
		stored, fp, err := scanOrder(br.QueryRow())
		if err != nil {
			return nil, fmt.Errorf("select order by idempotency key: %w", err)
		}
		switch {
		case results[i].Created:
		case string(fp) != string(n.Fingerprint):
			results[i] = Result{Err: order.ErrIdempotencyConflict}
		default:
			results[i] = Result{Order: stored} // a replay
		}
	}
	return results, nil
}

// holdConnection is one attempt of HoldConnection (retry.go). With conns
// above 1 it keeps its connection while it takes the next one (nested
// acquire, README, The pitfalls: 10), and runs the pg_sleep on the last.
func (s *Store) holdConnection(ctx context.Context, d time.Duration, conns int, after time.Time) error {
	conn, err := s.acquire(ctx, after)
	if err != nil {
		return err
	}
	defer s.release(conn)
	if conns > 1 {
		return s.holdConnection(ctx, d, conns-1, after)
	}
	if _, err := conn.Exec(ctx, "SELECT pg_sleep($1)", d.Seconds()); err != nil {
		return s.faultErr(ctx, fmt.Errorf("pg_sleep: %w", err), running, conn.Conn().IsClosed())
	}
	return nil
}

// getOrder is one attempt of GetOrder (retry.go).
func (s *Store) getOrder(ctx context.Context, id int64, after time.Time) (order.Order, error) {
	conn, err := s.acquire(ctx, after)
	if err != nil {
		return order.Order{}, err
	}
	defer s.release(conn)
	o, _, err := scanOrder(conn.QueryRow(ctx, selectOrderSQL+"o.id = $1", id))
	if errors.Is(err, pgx.ErrNoRows) {
		return order.Order{}, order.ErrNotFound
	}
	if err != nil {
		return order.Order{}, s.faultErr(ctx, fmt.Errorf("select order: %w", err), running, conn.Conn().IsClosed())
	}
	return o, nil
}

// selectOrderSQL reads an order with its items in one statement; a WHERE
// condition on o follows.
const selectOrderSQL = `
SELECT o.id, o.customer_id, o.total_cents, o.created_at, o.fingerprint,
       coalesce((SELECT json_agg(json_build_object('sku', i.sku, 'quantity', i.quantity,
                                                   'unit_price_cents', i.unit_price_cents) ORDER BY i.line)
                 FROM order_items i WHERE i.order_id = o.id), '[]')
FROM orders o WHERE `

func scanOrder(row pgx.Row) (order.Order, []byte, error) {
	var o order.Order
	var fp []byte
	err := row.Scan(&o.ID, &o.CustomerID, &o.TotalCents, &o.CreatedAt, &fp, &o.Items)
	return o, fp, err
}
