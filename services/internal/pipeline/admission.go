package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/orderlab/orderlab/services/internal/model"
	"github.com/orderlab/orderlab/services/internal/overload"
	"github.com/orderlab/orderlab/services/internal/telemetry"
)

// ErrClosed is returned by calls made after Close began.
var ErrClosed = fmt.Errorf("pipeline closed: %w", overload.ErrShuttingDown)

// Rejection reasons, the reason label of orderlab_pipeline_rejections_total.
const (
	// ReasonIntakeFull: no intake slot was free (within ENQUEUE_WAIT).
	ReasonIntakeFull = "intake_full"
	// ReasonAuditFull: no audit slot was free for an order.
	ReasonAuditFull = "audit_full"
)

// ticket is a request's admission to the pipeline: an intake slot, and for
// an order an audit slot when the audit stage runs; a read holds neither.
// It lives on the handler's goroutine: Admit makes it, PlaceOrder or
// HoldConnection hand its slots to the job they enqueue (request.go), and
// Release gives back whatever was not handed on.
type ticket struct {
	p     *Pipeline
	slot  bool // holds an intake slot not yet handed to an enqueued job
	audit bool // holds an audit slot not yet handed to a job
	wait  enqueueSpan
}

// Bind records the admission's pipeline.enqueue span under ctx's span when
// the ticket was taken before its request's span began (the API's edge).
func (t *ticket) Bind(ctx context.Context) {
	if !t.wait.recorded {
		t.wait.record(ctx, t.p.tracer)
	}
}

// enqueueSpan is what the pipeline.enqueue span of one admission says,
// kept so that the span can be recorded once the request's own span exists.
// Recorded only for a traced request: a rejection before the request's
// span began is counted, not traced (docs/admission.md).
type enqueueSpan struct {
	start            time.Time
	waited           time.Duration
	length, capacity int
	outcome, failure string
	recorded         bool
}

func (w *enqueueSpan) record(ctx context.Context, tracer trace.Tracer) {
	if !trace.SpanFromContext(ctx).IsRecording() {
		return
	}
	w.recorded = true
	_, span := tracer.Start(ctx, "pipeline.enqueue", trace.WithTimestamp(w.start), trace.WithAttributes(
		attribute.Int("pipeline.queue.length", w.length),
		attribute.Int("pipeline.queue.capacity", w.capacity),
		attribute.String("pipeline.outcome", w.outcome),
	))
	if w.failure != "" {
		span.SetStatus(codes.Error, w.failure)
	}
	span.End(trace.WithTimestamp(w.start.Add(w.waited)))
}

func (t *ticket) Release() {
	if t.slot {
		t.slot = false
		<-t.p.slots
	}
	if t.audit {
		t.audit = false
		<-t.p.auditSlots
	}
}

// Admit reserves what op needs before the request's body is read: an
// intake slot, waiting at most ENQUEUE_WAIT for one, and for an order an
// audit slot when the audit stage runs. Either one full is an
// *overload.RejectedError whose Retry-After is the time the slots ahead
// take to free up. A read by id is let in: it goes straight to the store,
// being short and not what the experiments load.
func (p *Pipeline) Admit(ctx context.Context, op model.Op) (model.Admitted, error) {
	if op == model.GetOrder {
		return &ticket{p: p, wait: enqueueSpan{recorded: true}}, nil // no wait to trace
	}
	t, err := p.admit(ctx, op)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// admit reserves the slots of op: a send on a full slots channel fails at
// once (select with default), or after ENQUEUE_WAIT.
func (p *Pipeline) admit(ctx context.Context, op model.Op) (_ *ticket, err error) {
	t := &ticket{p: p, wait: enqueueSpan{start: time.Now(), length: len(p.intake), capacity: cap(p.intake)}}
	outcome := "enqueued"
	defer func() {
		t.wait.waited, t.wait.outcome = time.Since(t.wait.start), outcome
		telemetry.Observe(ctx, p.m.enqueueWait.WithLabelValues(outcome), t.wait.waited.Seconds())
		t.wait.record(ctx, p.tracer)
	}()
	reject := func(reason, resource string, r *overload.ReleaseRate, ahead int) error {
		outcome = "rejected"
		p.m.rejections.WithLabelValues(reason).Inc()
		t.wait.failure = resource + " full"
		return &overload.RejectedError{Resource: resource, Waited: time.Since(t.wait.start), RetryAfter: r.RetryAfter(ahead)}
	}
	if p.isClosed() {
		outcome = "closed"
		return nil, ErrClosed
	}

	defer func() {
		if err != nil {
			t.Release()
		}
	}()
	if op == model.PlaceOrder && p.cfg.Audit.Enabled() {
		select {
		case p.auditSlots <- struct{}{}:
			t.audit = true
		default:
			return nil, reject(ReasonAuditFull, "audit queue", p.auditReleased, len(p.auditSlots))
		}
	}
	select {
	case p.slots <- struct{}{}:
		t.slot = true
		return t, nil
	default:
	}
	if p.cfg.EnqueueWait > 0 {
		timer := time.NewTimer(p.cfg.EnqueueWait)
		defer timer.Stop()
		select {
		case p.slots <- struct{}{}:
			t.slot = true
			return t, nil
		case <-ctx.Done():
			outcome = "canceled"
			return nil, ctx.Err()
		case <-timer.C:
		}
	}
	return nil, reject(ReasonIntakeFull, "queue", p.intakeReleased, len(p.slots))
}

func (p *Pipeline) isClosed() bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.closed
}

// errNoSlot is a job enqueued with a ticket that holds no intake slot: one
// admitted for a read, or used already. A bug of the caller's.
var errNoSlot = errors.New("pipeline: the request's admission holds no intake slot (admitted for a read, or used already)")

// enqueue hands j the ticket's slots and sends it on intake. The send
// never blocks: intake has room for every slot.
func (p *Pipeline) enqueue(tk *ticket, j *job) error {
	if !tk.slot {
		return errNoSlot
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.closed {
		return ErrClosed
	}
	tk.slot = false // freed by the price stage when it takes j
	j.audit, tk.audit = tk.audit, false
	p.intake <- j
	return nil
}
