package main

import (
	"context"
	"time"

	"github.com/orderlab/orderlab/services/internal/audit"
	"github.com/orderlab/orderlab/services/internal/order"
	"github.com/orderlab/orderlab/services/internal/overload"
	"github.com/orderlab/orderlab/services/internal/postgres"
)

// model calls the store from the request's own goroutine. The only limit is
// the pool: a request waits for a connection until its deadline. With
// AUDIT_DELAY each order also starts a goroutine for its audit write, and
// nothing bounds how many (no backpressure: README, The pitfalls).
type model struct {
	store *postgres.Store
	audit *audit.Recorder
}

// Admit lets every request in: nothing stands between it and the pool.
func (model) Admit(context.Context, overload.Work) (overload.Ticket, error) {
	return overload.Free, nil
}

func (m model) PlaceOrder(ctx context.Context, _ overload.Ticket, in order.Input, key string, delay, downstream time.Duration) (order.Order, bool, error) {
	r, err := m.store.CreateOrder(ctx, order.NewRequest(in, key), delay, downstream)
	if err == nil && r.Created && m.audit.Enabled() {
		m.audit.Go(r.Order)
	}
	return r.Order, r.Created, err
}

func (m model) GetOrder(ctx context.Context, _ overload.Ticket, id int64) (order.Order, error) {
	return m.store.GetOrder(ctx, id)
}

func (m model) HoldConnection(ctx context.Context, _ overload.Ticket, d time.Duration, conns int) error {
	return m.store.HoldConnection(ctx, d, conns)
}

// Close waits for the audit goroutines; in-flight requests are the HTTP server's.
func (m model) Close(ctx context.Context) error { return m.audit.Wait(ctx) }
