// Package model is the seam between the HTTP API and a concurrency model:
// the one thing the three services do differently. The API asks the Model to
// admit each request before it reads the request's body, then asks the
// admitted request to reach the database, and releases it once it has
// answered. services/internal/direct is the model of unbounded and
// semaphore (a request's own goroutine calls the store), and
// services/internal/pipeline the pipeline's (requests flow through stages).
package model

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/orderlab/orderlab/services/internal/order"
)

// Model is a concurrency model: how a request reaches the database.
type Model interface {
	// Admit decides whether a request for op may enter, before its body is
	// read or anything is allocated for it, so that a request turned away
	// costs as little as a trivial route. It returns the admitted request,
	// which holds what the model reserved for it (a permit, a queue slot)
	// until its Release; or an *overload.RejectedError (429),
	// overload.ErrShuttingDown (503), or ctx's error.
	Admit(ctx context.Context, op Op) (Admitted, error)
	// Close stops taking new requests and finishes the ones accepted,
	// within ctx.
	Close(ctx context.Context) error
}

// Op names what a request will ask of the database, so that a model can
// admit it (or turn it away) before the request's body is read.
type Op int

const (
	// PlaceOrder is POST /orders: one order written.
	PlaceOrder Op = iota
	// GetOrder is GET /orders/{id}: one order read.
	GetOrder
	// HoldConnection is GET /work/db: connections held for a while.
	HoldConnection
)

// Admitted is a request a Model let in, with what it reserved. Its caller
// makes the one call the request was admitted for (its Op's), then calls
// Release, whatever happened; Release is idempotent.
type Admitted interface {
	// PlaceOrder stores in, sleeping dbDelay inside the transaction and
	// waiting downstream there for a downstream call (api_call=inside,
	// docs/scenarios: tx-across-downstream). The Result's Created is false for an
	// idempotent replay.
	PlaceOrder(ctx context.Context, in order.Input, idempotencyKey string, dbDelay, downstream time.Duration) (order.Result, error)
	// GetOrder returns the order with id, or order.ErrNotFound.
	GetOrder(ctx context.Context, id int64) (order.Order, error)
	// HoldConnection holds conns database connections at once, each taken
	// while the ones before it are held (conns above 1: a nested acquire,
	// docs/scenarios: nested-acquire), and runs pg_sleep(d) on the last.
	HoldConnection(ctx context.Context, d time.Duration, conns int) error
	// Wait is how the request waited for what the model reserved for it,
	// which the API records as a span of the request's trace.
	Wait() Wait
	// Release gives back what the model reserved for the request. done
	// says whether the request was answered within its deadline: a limit
	// that learns from latency learns from those only.
	Release(done bool)
}

// Wait is the wait of one admission: from Start, for Waited, as the span
// called Span with Attributes. A model that reserves nothing has no wait
// (Span is empty).
type Wait struct {
	Span       string
	Start      time.Time
	Waited     time.Duration
	Attributes []attribute.KeyValue
}
