package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/orderlab/orderlab/services/internal/order"
)

// GetOrder returns the order with id, or order.ErrNotFound. A broken
// connection is retried (retry.go): a read commits nothing.
func (s *Store) GetOrder(ctx context.Context, id int64) (order.Order, error) {
	o, err := s.getOrder(ctx, id, time.Time{})
	if failed := time.Now(); s.retryRead(ctx, err) {
		o, err = s.getOrder(ctx, id, failed)
	}
	return o, readErr(err)
}

// getOrder is one attempt of GetOrder.
func (s *Store) getOrder(ctx context.Context, id int64, after time.Time) (_ order.Order, err error) {
	conn, err := s.acquire(ctx, after)
	if err != nil {
		return order.Order{}, err
	}
	defer func() { s.release(conn, err) }()
	o, _, err := scanOrder(conn.QueryRow(ctx, selectOrderSQL+"o.id = $1", id))
	if errors.Is(err, pgx.ErrNoRows) {
		return order.Order{}, order.ErrNotFound
	}
	if err != nil {
		return order.Order{}, s.classified(ctx, fmt.Errorf("select order: %w", err), running, conn.Conn().IsClosed())
	}
	return o, nil
}

// selectOrderSQL reads an order with its items in one statement (GetOrder,
// and the read by key after a keyed insert, readBatch); a WHERE
// condition on o follows.
const selectOrderSQL = `
SELECT o.id, o.customer_id, o.total_cents, o.created_at, o.fingerprint,
       coalesce((SELECT json_agg(json_build_object('sku', i.sku, 'quantity', i.quantity,
                                                   'unit_price_cents', i.unit_price_cents) ORDER BY i.line)
                 FROM order_items i WHERE i.order_id = o.id), '[]')
FROM orders o WHERE `

// scanOrder scans a row of selectOrderSQL, with the stored fingerprint.
func scanOrder(row pgx.Row) (order.Order, []byte, error) {
	var o order.Order
	var fp []byte
	err := row.Scan(&o.ID, &o.CustomerID, &o.TotalCents, &o.CreatedAt, &fp, &o.Items)
	return o, fp, err
}
