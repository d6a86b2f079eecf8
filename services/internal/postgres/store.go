// Package postgres owns everything the services say to Postgres: the pool and
// its instrumentation, the embedded migrations and every SQL statement.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/orderlab/orderlab/services/internal/order"
	"github.com/orderlab/orderlab/services/internal/overload"
)

// Config says how to reach Postgres and how large the pool is.
type Config struct {
	URL      string
	MaxConns int32
	MinConns int32
	// StartupTimeout bounds how long Open waits for the database to answer.
	StartupTimeout time.Duration
}

// Store runs the services' SQL over an instrumented pgx pool.
type Store struct {
	pool   *pgxpool.Pool
	health *healthConn
}

// Open waits for the database (bounded, logged retries), applies the
// migrations and returns a Store whose pool metrics are registered on reg.
func Open(ctx context.Context, cfg Config, log *slog.Logger, reg prometheus.Registerer, tp trace.TracerProvider) (*Store, error) {
	pc, err := pgxpool.ParseConfig(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("parse DATABASE_URL: %w", err)
	}
	pc.MaxConns = cfg.MaxConns
	pc.MinConns = cfg.MinConns
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
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		_ = conn.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("create pool: %w", err)
	}
	if err := reg.Register(tracer); err != nil {
		pool.Close()
		return nil, err
	}
	if err := reg.Register(newStatsCollector(pool)); err != nil {
		pool.Close()
		return nil, err
	}
	return &Store{pool: pool, health: &healthConn{cfg: healthCfg, conn: conn}}, nil
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

// Close closes the pool and the health connection.
func (s *Store) Close() {
	s.pool.Close()
	s.health.close()
}

// Ping says whether Postgres answers. It uses a connection of its own, so a
// starved pool does not make the service look unreachable.
func (s *Store) Ping(ctx context.Context) error { return s.health.ping(ctx) }

// acquire takes a pooled connection; when ctx's deadline passes while it
// waits, the error is an *overload.PoolTimeoutError saying how long.
func (s *Store) acquire(ctx context.Context) (*pgxpool.Conn, error) {
	start := time.Now()
	c, err := s.pool.Acquire(ctx)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, &overload.PoolTimeoutError{Waited: time.Since(start)}
		}
		return nil, fmt.Errorf("acquire connection: %w", err)
	}
	return c, nil
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
// its connection that long, like a slow query.
func (s *Store) CreateOrder(ctx context.Context, n order.Request, delay time.Duration) (Result, error) {
	rs, err := s.CreateOrders(ctx, []order.Request{n}, delay)
	if err != nil {
		return Result{}, err
	}
	return rs[0], rs[0].Err
}

// CreateOrders inserts orders in one transaction and one round trip,
// sleeping delay first when it is positive. It sends one pgx Batch outside
// any explicit transaction: pgx documents that a batch then runs in one
// implicit transaction (its statements share a single Sync), which saves the
// BEGIN and COMMIT round trips that would otherwise lengthen every
// connection hold. The error is the transaction's: when it is not nil nothing
// was committed. A per-order problem that does not abort the transaction (an
// Idempotency-Key reused with another body) is reported in that Result.
func (s *Store) CreateOrders(ctx context.Context, ns []order.Request, delay time.Duration) ([]Result, error) {
	conn, err := s.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Release()

	var b pgx.Batch
	if delay > 0 {
		b.Queue("SELECT pg_sleep($1)", delay.Seconds())
	}
	for _, n := range ns {
		b.Queue(insertOrderSQL, insertArgs(n)...)
	}
	br := conn.SendBatch(ctx, &b)
	if delay > 0 {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			return nil, fmt.Errorf("pg_sleep: %w", err)
		}
	}
	results := make([]Result, len(ns))
	var replays []int
	for i, n := range ns {
		var id int64
		var created time.Time
		switch err := br.QueryRow().Scan(&id, &created); {
		case errors.Is(err, pgx.ErrNoRows):
			replays = append(replays, i) // the key exists: look it up below
		case err != nil:
			_ = br.Close()
			return nil, fmt.Errorf("insert order: %w", err)
		default:
			results[i] = Result{Created: true, Order: order.Order{
				ID: id, CustomerID: n.Input.CustomerID, Items: n.Input.Items,
				TotalCents: n.TotalCents, CreatedAt: created,
			}}
		}
	}
	if err := br.Close(); err != nil {
		return nil, fmt.Errorf("insert orders: %w", err)
	}
	// Replays read orders that are committed: by an earlier request, or by
	// this batch (two requests with one key in the same batch).
	for _, i := range replays {
		o, fp, err := orderByKey(ctx, conn, ns[i].IdempotencyKey)
		if err != nil {
			return nil, err
		}
		if string(fp) != string(ns[i].Fingerprint) {
			results[i] = Result{Err: order.ErrIdempotencyConflict}
			continue
		}
		results[i] = Result{Order: o}
	}
	return results, nil
}

// HoldConnection takes a pooled connection and holds it for d with pg_sleep:
// a database call that takes d.
func (s *Store) HoldConnection(ctx context.Context, d time.Duration) error {
	conn, err := s.acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_sleep($1)", d.Seconds()); err != nil {
		return fmt.Errorf("pg_sleep: %w", err)
	}
	return nil
}

// GetOrder returns the order with id, or order.ErrNotFound.
func (s *Store) GetOrder(ctx context.Context, id int64) (order.Order, error) {
	conn, err := s.acquire(ctx)
	if err != nil {
		return order.Order{}, err
	}
	defer conn.Release()
	var o order.Order
	err = conn.QueryRow(ctx, `SELECT id, customer_id, total_cents, created_at FROM orders WHERE id = $1`, id).
		Scan(&o.ID, &o.CustomerID, &o.TotalCents, &o.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return order.Order{}, order.ErrNotFound
	}
	if err != nil {
		return order.Order{}, fmt.Errorf("select order: %w", err)
	}
	o.Items, err = items(ctx, conn, o.ID)
	return o, err
}

type querier interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
	QueryRow(context.Context, string, ...any) pgx.Row
}

func orderByKey(ctx context.Context, q querier, key string) (order.Order, []byte, error) {
	var o order.Order
	var fp []byte
	err := q.QueryRow(ctx, `SELECT id, customer_id, total_cents, created_at, fingerprint FROM orders WHERE idempotency_key = $1`, key).
		Scan(&o.ID, &o.CustomerID, &o.TotalCents, &o.CreatedAt, &fp)
	if err != nil {
		return o, nil, fmt.Errorf("select order by idempotency key: %w", err)
	}
	o.Items, err = items(ctx, q, o.ID)
	return o, fp, err
}

func items(ctx context.Context, q querier, id int64) ([]order.Item, error) {
	rows, err := q.Query(ctx, `SELECT sku, quantity, unit_price_cents FROM order_items WHERE order_id = $1 ORDER BY line`, id)
	if err != nil {
		return nil, fmt.Errorf("select items: %w", err)
	}
	its, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (order.Item, error) {
		var it order.Item
		err := r.Scan(&it.SKU, &it.Quantity, &it.UnitPriceCents)
		return it, err
	})
	if err != nil {
		return nil, fmt.Errorf("select items: %w", err)
	}
	return its, nil
}
