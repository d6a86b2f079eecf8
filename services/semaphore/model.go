package main

import (
	"context"
	"time"

	"github.com/orderlab/orderlab/services/internal/limiter"
	"github.com/orderlab/orderlab/services/internal/order"
	"github.com/orderlab/orderlab/services/internal/postgres"
)

// model takes a permit before every database call and gives it back after.
// With LIMIT <= DB_MAX_CONNS no request ever waits in the pool.
type model struct {
	store   *postgres.Store
	limiter *limiter.Limiter
}

func (m model) PlaceOrder(ctx context.Context, in order.Input, key string, delay time.Duration) (order.Order, bool, error) {
	release, err := m.limiter.Acquire(ctx)
	if err != nil {
		return order.Order{}, false, err
	}
	defer release()
	r, err := m.store.CreateOrder(ctx, order.NewRequest(in, key), delay)
	return r.Order, r.Created, err
}

func (m model) GetOrder(ctx context.Context, id int64) (order.Order, error) {
	release, err := m.limiter.Acquire(ctx)
	if err != nil {
		return order.Order{}, err
	}
	defer release()
	return m.store.GetOrder(ctx, id)
}

func (m model) HoldConnection(ctx context.Context, d time.Duration) error {
	release, err := m.limiter.Acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	return m.store.HoldConnection(ctx, d)
}

// Close has nothing to drain: permits are held by in-flight requests only.
func (m model) Close(context.Context) error { return nil }
