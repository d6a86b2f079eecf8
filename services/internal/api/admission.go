package api

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel/trace"

	"github.com/orderlab/orderlab/services/internal/model"
	"github.com/orderlab/orderlab/services/internal/overload"
)

// admission is the one place that admits the requests that reach the
// database (POST /orders, GET /orders/:id, GET /work/db: addRoutes
// registers them with handle). It is the first handler of their routes,
// before any middleware (docs/admission.md): it asks the model to admit
// the request, and answers a refusal itself, with the pre-rendered 429 and
// its Retry-After, so that a rejected request costs no span, no deadline,
// no exemplar and no decoding. Under a retry storm rejections outnumber
// orders by tens to one, and what each costs is CPU the admitted orders do
// not get. A refusal is still counted, on the same series as every other
// answer (orderlab_http_request_duration_seconds,
// orderlab_http_requests_in_flight) and on the model's rejection counter;
// it is not traced. An admitted request is served as every other (the
// observer), timed and bounded from its arrival, the wait for its
// admission a span of its trace; its handler gets the model.Admitted as an
// argument, released once the request is answered, however the handler
// ends (a panic, a client gone).
type admission struct {
	m   model.Model
	obs *observer
	log *slog.Logger
}

// admittedHandler serves a request the model admitted: it returns the
// status and body of its success, or the error that is the answer
// (writeError).
type admittedHandler func(c *gin.Context, a model.Admitted) (status int, body any, err error)

// handle registers h for method and path, for requests the model admits
// for op.
func (g *admission) handle(r gin.IRoutes, method, path string, op model.Op, h admittedHandler) {
	refused := g.obs.met.duration.WithLabelValues(method, path, "429") // bound once: no label lookup per 429
	r.Handle(method, path, func(c *gin.Context) {
		start := time.Now()
		g.obs.met.inFlight.Inc()
		defer g.obs.met.inFlight.Dec()
		client := overload.ClientOf(c.Request.Context())
		a, err := g.m.Admit(c.Request.Context(), op)
		var rejected *overload.RejectedError
		switch {
		case errors.As(err, &rejected):
			g.holdEarly(c, client, start)
			client.Told(time.Now(), rejected.RetryAfter)
			rejectedProblem(c, rejected)
			refused.Observe(time.Since(start).Seconds())
		case err != nil: // shutting down, a client gone
			g.obs.serve(c, start, func() { writeError(c, g.log, err) })
		default:
			done := false // answered within the deadline
			defer func() { a.Release(done) }()
			g.obs.serve(c, start, func() {
				g.recordWait(c.Request.Context(), a.Wait())
				status, body, err := h(c, a)
				answer(c, g.log, status, body, err)
				done = c.Request.Context().Err() == nil
			})
		}
	})
}

// holdEarly holds the refusal of a request that came back before the
// Retry-After last given on its connection (overload.Client) until that
// time is up, at most overload.MaxHold and the request's REQUEST_TIMEOUT
// after it arrived (HOLD_EARLY_RETRIES; docs/admission.md). The request
// was asked to admit at once all the same: an early request that finds a
// permit is served without delay.
func (g *admission) holdEarly(c *gin.Context, client *overload.Client, start time.Time) {
	until, early := client.Early(start)
	if !early {
		return
	}
	k := g.obs.live.Load()
	if !k.HoldEarlyRetries {
		return
	}
	if deadline := start.Add(min(k.RequestTimeout, overload.MaxHold)); until.After(deadline) {
		until = deadline
	}
	overload.HoldUntil(c.Request.Context(), until)
}

// recordWait records the wait for an admission as a span under the request's,
// with its real start and end.
func (g *admission) recordWait(ctx context.Context, w model.Wait) {
	if w.Span == "" || !trace.SpanFromContext(ctx).IsRecording() {
		return
	}
	_, waitSpan := g.obs.tracer.Start(ctx, w.Span, trace.WithTimestamp(w.Start), trace.WithAttributes(w.Attributes...))
	waitSpan.End(trace.WithTimestamp(w.Start.Add(w.Waited)))
}
