package main

import (
	"context"
	"time"

	"github.com/orderlab/orderlab/services/internal/audit"
	"github.com/orderlab/orderlab/services/internal/limiter"
	"github.com/orderlab/orderlab/services/internal/order"
	"github.com/orderlab/orderlab/services/internal/overload"
	"github.com/orderlab/orderlab/services/internal/postgres"
)

// model admits a request only with a permit, taken before its body is read
// and given back when it has been answered: a request turned away costs no
// decoding. With a limit at or below DB_MAX_CONNS (or LIMIT=adaptive) no
// request waits long in the pool. The permit bounds database access only:
// an audit write (AUDIT_DELAY) still starts one unbounded goroutine per order.
type model struct {
	store   *postgres.Store
	limiter *limiter.Limiter
	audit   *audit.Recorder
}

// Admit takes a permit for every kind of database work, waiting at most
// LIMIT_WAIT for one.
func (m model) Admit(ctx context.Context, _ overload.Work) (overload.Ticket, error) {
	return m.limiter.Acquire(ctx)
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

// Close waits for the audit goroutines; permits are held by in-flight requests only.
func (m model) Close(ctx context.Context) error { return m.audit.Wait(ctx) }
