package main

import (
	"context"
	"time"

	"github.com/orderlab/orderlab/services/internal/order"
	"github.com/orderlab/orderlab/services/internal/overload"
	"github.com/orderlab/orderlab/services/internal/pipeline"
	"github.com/orderlab/orderlab/services/internal/postgres"
)

// model hands writes to the pipeline and waits for their commit; the
// handler's goroutine never touches the pool for them. Reads by id go
// straight to the pool: they are short and not what the experiments load.
type model struct {
	store    *postgres.Store
	pipeline *pipeline.Pipeline
}

// Admit reserves an intake slot (and for an order an audit slot) before the
// body is read; reads are let in.
func (m model) Admit(ctx context.Context, w overload.Work) (overload.Ticket, error) {
	if w == overload.GetOrder {
		return overload.Free, nil
	}
	return m.pipeline.Admit(ctx, w)
}

func (m model) PlaceOrder(ctx context.Context, t overload.Ticket, in order.Input, key string, delay, downstream time.Duration) (order.Order, bool, error) {
	r, err := m.pipeline.PlaceOrder(ctx, t, in, key, delay, downstream)
	return r.Order, r.Created, err
}

func (m model) GetOrder(ctx context.Context, _ overload.Ticket, id int64) (order.Order, error) {
	return m.store.GetOrder(ctx, id)
}

func (m model) HoldConnection(ctx context.Context, t overload.Ticket, d time.Duration, conns int) error {
	return m.pipeline.HoldConnection(ctx, t, d, conns)
}

// Close drains the queues: every accepted order is committed or failed.
func (m model) Close(ctx context.Context) error { return m.pipeline.Close(ctx) }
