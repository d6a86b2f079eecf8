package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/orderlab/orderlab/services/internal/model"
	"github.com/orderlab/orderlab/services/internal/overload"
)

// ErrClosed is returned by calls made after Close began.
var ErrClosed = fmt.Errorf("pipeline closed: %w", overload.ErrShuttingDown)

// Rejection reasons, the reason label of orderlab_pipeline_rejections_total.
const (
	ReasonIntakeFull = "intake_full" // no intake slot was free (within ENQUEUE_WAIT)
	ReasonAuditFull  = "audit_full"  // no audit slot was free for an order
)

// ticket is what the pipeline reserved for an admitted request: an intake slot, and for
// an order an audit slot when the audit stage runs; a read holds neither.
// It lives on the handler's goroutine: Admit makes it, PlaceOrder or
// HoldConnection hand its slots to the job they enqueue (request.go), and
// Release gives back whatever was not handed on.
type ticket struct {
	p     *Pipeline
	slot  bool // holds an intake slot not yet handed to an enqueued job
	audit bool // holds an audit slot not yet handed to a job
	// The wait for the slots: when it began, how long it took, and the
	// intake queue's length when it began.
	start  time.Time
	waited time.Duration
	queued int
}

// Wait is the ticket's wait for its slots, the pipeline.enqueue span of its
// request; a read waited for nothing.
func (t *ticket) Wait() model.Wait {
	if t.start.IsZero() {
		return model.Wait{}
	}
	return model.Wait{Span: "pipeline.enqueue", Start: t.start, Waited: t.waited, Attributes: []attribute.KeyValue{
		attribute.Int("pipeline.queue.length", t.queued),
		attribute.Int("pipeline.queue.capacity", cap(t.p.intake)),
		attribute.String("pipeline.outcome", "enqueued"),
	}}
}

func (t *ticket) Release(bool) {
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
		return &ticket{p: p}, nil
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
	t := &ticket{p: p, start: time.Now(), queued: len(p.intake)}
	outcome := "enqueued"
	defer func() {
		t.waited = time.Since(t.start)
		p.met.Enqueued(ctx, outcome, t.waited)
	}()
	reject := func(reason, resource string, r *overload.ReleaseRate, ahead int) error {
		outcome = "rejected"
		p.met.Rejected(reason)
		return &overload.RejectedError{Resource: resource, Waited: time.Since(t.start), RetryAfter: r.RetryAfter(ahead)}
	}
	if p.isClosed() {
		outcome = "closed"
		return nil, ErrClosed
	}

	defer func() {
		if err != nil {
			t.Release(false)
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
var errNoSlot = errors.New("pipeline: the request's ticket holds no intake slot (admitted for a read, or used already)")

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
