package main

import (
	"context"
	"time"

	"github.com/orderlab/orderlab/services/internal/order"
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

func (m model) PlaceOrder(ctx context.Context, in order.Input, key string, delay time.Duration) (order.Order, bool, error) {
	r, err := m.pipeline.PlaceOrder(ctx, in, key, delay)
	return r.Order, r.Created, err
}

func (m model) GetOrder(ctx context.Context, id int64) (order.Order, error) {
	return m.store.GetOrder(ctx, id)
}

func (m model) HoldConnection(ctx context.Context, d time.Duration) error {
	return m.pipeline.HoldConnection(ctx, d)
}

// Close drains the queues: every accepted order is committed or failed.
func (m model) Close(ctx context.Context) error { return m.pipeline.Close(ctx) }
