package main

import (
	"context"
	"time"

	"github.com/orderlab/orderlab/services/internal/order"
	"github.com/orderlab/orderlab/services/internal/postgres"
)

// model calls the store from the request's own goroutine. The only limit is
// the pool: a request waits for a connection until its deadline.
type model struct{ store *postgres.Store }

func (m model) PlaceOrder(ctx context.Context, in order.Input, key string, delay time.Duration) (order.Order, bool, error) {
	r, err := m.store.CreateOrder(ctx, order.NewRequest(in, key), delay)
	return r.Order, r.Created, err
}

func (m model) GetOrder(ctx context.Context, id int64) (order.Order, error) {
	return m.store.GetOrder(ctx, id)
}

func (m model) HoldConnection(ctx context.Context, d time.Duration) error {
	return m.store.HoldConnection(ctx, d)
}

// Close has nothing to drain: in-flight requests are the HTTP server's.
func (m model) Close(context.Context) error { return nil }
