// Package direct is the concurrency model in which a request's own
// goroutine calls the store: the Go counterpart of a thread per request.
// The unbounded service admits every request, so that the only limit is the
// pool, where a request waits for a connection until its deadline. The
// semaphore service admits a request only with a permit of its limiter
// (services/internal/limiter), taken before the body is read and given back
// once the request is answered: with a limit at or below DB_MAX_CONNS (or
// LIMIT=adaptive) no request waits long in the pool, and one turned away
// costs no decoding. Either way, with AUDIT_DELAY each order created also
// starts a goroutine for its audit write, and nothing bounds how many (no
// backpressure: docs/scenarios: backpressure-void); a permit bounds database access
// only.
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
	// acquire admits the requests; nil admits every one.
	acquire Acquire
	audit   *audit.Recorder
	// free is the admission of every request when nothing limits them: it
	// reserves nothing, so one serves them all.
	free admitted
}

var _ model.Model = (*Model)(nil)

// Unlimited is the unbounded service's model: nothing stands between a
// request and the pool.
func Unlimited(store *postgres.Store, audit *audit.Recorder) *Model {
	m := &Model{store: store, audit: audit}
	m.free.m = m
	return m
}

// Acquire takes a permit for one request's database work, or refuses it
// (the semaphore service's limiter: services/internal/limiter). The
// unbounded service, which has none, links no limiter.
type Acquire func(ctx context.Context) (Permit, error)

// Permit is what Acquire gave one request, held until its Release; done
// says whether the request's work ended within its deadline.
type Permit interface {
	Wait() model.Wait
	Release(done bool)
}

// Limited is the semaphore service's model: a request is admitted with a
// permit from acquire, for every kind of database work.
func Limited(store *postgres.Store, acquire Acquire, audit *audit.Recorder) *Model {
	m := Unlimited(store, audit)
	m.acquire = acquire
	return m
}

// Admit lets the request in: at once without a limit, with a permit
// otherwise.
func (m *Model) Admit(ctx context.Context, _ model.Op) (model.Admitted, error) {
	if m.acquire == nil {
		return &m.free, nil
	}
	p, err := m.acquire(ctx)
	if err != nil {
		return nil, err
	}
	return &admitted{m: m, permit: p}, nil
}

// Close has nothing to stop: in-flight requests are the HTTP server's, and
// so are the permits they hold; the audit goroutines are the Recorder's,
// which the service waits for when it stops.
func (m *Model) Close(context.Context) error { return nil }

// admitted is a request let in, with its permit when a limiter gave one.
type admitted struct {
	m      *Model
	permit Permit
	// done: the request's work ended within its deadline (Permit.Release).
	done bool
}

func (a *admitted) PlaceOrder(ctx context.Context, in order.Input, key string, delay, downstream time.Duration) (order.Result, error) {
	defer a.finish(ctx)
	r, err := a.m.store.CreateOrder(ctx, order.NewRequest(in, key), delay, downstream)
	if err == nil && r.Created && a.m.audit.Enabled() {
		a.m.audit.Go(r.Order)
	}
	return r, err
}

func (a *admitted) GetOrder(ctx context.Context, id int64) (order.Order, error) {
	defer a.finish(ctx)
	return a.m.store.GetOrder(ctx, id)
}

func (a *admitted) HoldConnection(ctx context.Context, d time.Duration, conns int) error {
	defer a.finish(ctx)
	return a.m.store.HoldConnection(ctx, d, conns)
}

// finish notes whether the work ended within the request's deadline, for
// the permit's Release (the admission shared by every unlimited request
// notes nothing).
func (a *admitted) finish(ctx context.Context) {
	if a.permit != nil {
		a.done = ctx.Err() == nil
	}
}

func (a *admitted) Wait() model.Wait {
	if a.permit == nil {
		return model.Wait{}
	}
	return a.permit.Wait()
}

func (a *admitted) Release() {
	if a.permit != nil {
		a.permit.Release(a.done)
	}
}
