// Package direct is the concurrency model in which a request's own
// goroutine calls the store: the Go counterpart of a thread per request.
// The unbounded service admits every request, so that the only limit is the
// pool, where a request waits for a connection until its deadline. The
// semaphore service admits a request only with a permit (limited.go). With
// AUDIT_DELAY each order created also starts a goroutine for its audit
// write, and nothing bounds how many (no backpressure: docs/scenarios:
// backpressure-void).
package direct

import (
	"context"
	"time"

	"github.com/orderlab/orderlab/services/internal/audit"
	"github.com/orderlab/orderlab/services/internal/model"
	"github.com/orderlab/orderlab/services/internal/order"
	"github.com/orderlab/orderlab/services/internal/postgres"
)

// Model sends every admitted request straight to the store.
type Model struct {
	store *postgres.Store
	audit *audit.Recorder
	// acquire takes a permit per request (Limited); nil admits every one.
	acquire Acquire
	// free is the admission of every request when nothing limits them: it
	// reserves nothing, so one serves them all.
	free admitted
}

// Unlimited is the unbounded service's model: nothing stands between a
// request and the pool.
func Unlimited(store *postgres.Store, audit *audit.Recorder) *Model {
	m := &Model{store: store, audit: audit}
	m.free.m = m
	return m
}

// Admit lets the request in: at once without a limit, with a permit
// otherwise.
func (m *Model) Admit(ctx context.Context, _ model.Op) (model.Admitted, error) {
	if m.acquire == nil {
		return &m.free, nil
	}
	return m.admitWithPermit(ctx)
}

// Close has nothing to stop: in-flight requests are the HTTP server's, and
// so are the permits they hold; the audit goroutines are the Recorder's,
// which the service waits for when it stops.
func (m *Model) Close(context.Context) error { return nil }

// admitted is a request let in, with its permit when it needed one.
type admitted struct {
	m      *Model
	permit Permit
}

func (a *admitted) PlaceOrder(ctx context.Context, in order.Input, key string, delay, downstream time.Duration) (order.Result, error) {
	r, err := a.m.store.CreateOrder(ctx, order.NewRequest(in, key), delay, downstream)
	if err == nil && r.Created && a.m.audit.Enabled() {
		a.m.audit.Go(r.Order)
	}
	return r, err
}

func (a *admitted) GetOrder(ctx context.Context, id int64) (order.Order, error) {
	return a.m.store.GetOrder(ctx, id)
}

func (a *admitted) HoldConnection(ctx context.Context, d time.Duration, conns int) error {
	return a.m.store.HoldConnection(ctx, d, conns)
}

func (a *admitted) Wait() model.Wait {
	if a.permit == nil {
		return model.Wait{} // nothing waited for
	}
	return a.permit.Wait()
}

func (a *admitted) Release(done bool) {
	if a.permit != nil {
		a.permit.Release(done)
	}
}
