package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/orderlab/orderlab/services/internal/dberr"
	"github.com/orderlab/orderlab/services/internal/order"
)

// CreateOrder inserts one order and its items in one transaction. When delay
// is positive the transaction first runs pg_sleep, so that the request holds
// its connection that long, like a slow query; when downstream is positive
// the transaction also waits that long for a (simulated) downstream call,
// holding its connection (docs/scenarios: tx-across-downstream). Errors are
// CreateOrders', and the order's own Result.Err.
func (s *Store) CreateOrder(ctx context.Context, n order.Request, delay, downstream time.Duration) (order.Result, error) {
	rs, err := s.CreateOrders(ctx, []order.Request{n}, delay, downstream)
	if err != nil {
		return order.Result{}, err
	}
	return rs[0], rs[0].Err
}

// CreateOrders inserts orders in one transaction and one round trip,
// sleeping delay first when it is positive, and sends them again when that
// is safe (retry.go).
//
// The error is the transaction's, a *dberr.Error: when it is not nil, no
// Result is returned and whether anything was committed is the class's to
// say. A per-order problem is reported in that order's Result.Err: an
// Idempotency-Key reused with another body, or, after a broken connection,
// an order without a key whose outcome is unknown (dberr.OutcomeUnknown)
// while its keyed batch mates were replayed.
//
// downstream, when positive, is a downstream call the transaction waits for
// while it holds its connection (CreateOrder).
func (s *Store) CreateOrders(ctx context.Context, ns []order.Request, delay, downstream time.Duration) ([]order.Result, error) {
	rs, err := s.createOrders(ctx, ns, delay, downstream, time.Time{})
	if err == nil {
		return rs, nil
	}
	failed := time.Now()
	switch s.retryWrite(ctx, err, ns) {
	case resendAll:
		return s.createOrders(ctx, ns, delay, downstream, failed)
	case resendKeyed:
		return s.replayKeyed(ctx, ns, delay, downstream, err, failed)
	}
	return nil, err
}

// replayKeyed sends the keyed orders of ns again after first, an error of
// unknown outcome. The orders without a key get first as their Result.Err.
// When the second attempt fails too, the outcome of every order is still
// unknown, whatever that attempt's own class.
func (s *Store) replayKeyed(ctx context.Context, ns []order.Request, delay, downstream time.Duration, first error, failed time.Time) ([]order.Result, error) {
	var keyed []order.Request
	var at []int
	for i, n := range ns {
		if n.IdempotencyKey != "" {
			keyed = append(keyed, n)
			at = append(at, i)
		}
	}
	again, err := s.createOrders(ctx, keyed, delay, downstream, failed)
	if err != nil {
		if c, _ := dberr.ClassOf(err); c == dberr.Deadline {
			return nil, err // also a write of unknown outcome, and the request's deadline
		}
		return nil, first
	}
	rs := make([]order.Result, len(ns))
	for i := range rs {
		rs[i].Err = first
	}
	for k, i := range at {
		rs[i] = again[k]
	}
	return rs, nil
}

// createOrders is one attempt of CreateOrders, on one pooled connection
// (opened after after, for a retry: see acquire).
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
func (s *Store) createOrders(ctx context.Context, ns []order.Request, delay, downstream time.Duration, after time.Time) (_ []order.Result, err error) {
	conn, err := s.acquire(ctx, after)
	if err != nil {
		return nil, err
	}
	defer func() { s.release(conn, err) }()

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
		return nil, s.classified(ctx, err, at, conn.Conn().IsClosed())
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

func readBatch(br pgx.BatchResults, ns []order.Request, delay time.Duration) ([]order.Result, error) {
	if delay > 0 {
		if _, err := br.Exec(); err != nil {
			return nil, fmt.Errorf("pg_sleep: %w", err)
		}
	}
	results := make([]order.Result, len(ns))
	for i, n := range ns {
		var id int64
		var created time.Time
		switch err := br.QueryRow().Scan(&id, &created); {
		case err == nil:
			results[i] = order.Result{Created: true, Order: order.Order{
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
			results[i] = order.Result{Err: order.ErrIdempotencyConflict}
		default:
			results[i] = order.Result{Order: stored} // a replay
		}
	}
	return results, nil
}

// insertOrderSQL inserts one order and its items in one statement. A key
// already stored inserts nothing and returns no row: the batch's read by
// key that follows finds the stored order (readBatch).
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
