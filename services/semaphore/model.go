package main

import (
	"context"
	"time"

	"github.com/orderlab/orderlab/services/internal/audit"
	"github.com/orderlab/orderlab/services/internal/limiter"
	"github.com/orderlab/orderlab/services/internal/order"
	"github.com/orderlab/orderlab/services/internal/postgres"
)

// model takes a permit before every database call and gives it back after.
// With LIMIT <= DB_MAX_CONNS no request ever waits in the pool. The permit
// bounds database access only: an audit write (AUDIT_DELAY) still starts one
// unbounded goroutine per order.
type model struct {
	store   *postgres.Store
	limiter *limiter.Limiter
	audit   *audit.Recorder
}

func (m model) PlaceOrder(ctx context.Context, in order.Input, key string, delay time.Duration) (order.Order, bool, error) {
	release, err := m.limiter.Acquire(ctx)
	if err != nil {
		return order.Order{}, false, err
	}
	defer release()
	r, err := m.store.CreateOrder(ctx, order.NewRequest(in, key), delay)
	if err == nil && r.Created && m.audit.Enabled() {
		m.audit.Go(r.Order)
	}
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

// Close waits for the audit goroutines; permits are held by in-flight requests only.
func (m model) Close(ctx context.Context) error { return m.audit.Wait(ctx) }
