package pipeline

import (
	"context"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/orderlab/orderlab/services/internal/dberr"
	"github.com/orderlab/orderlab/services/internal/model"
	"github.com/orderlab/orderlab/services/internal/order"
)

// persistWorker is one persist worker: it receives a job, fills a batch
// with whatever else is queued (waiting at most BatchWait), and commits it.
func (p *Pipeline) persistWorker() {
	for first := range p.persist {
		p.run(first)
	}
}

// run runs first: a connection hold, or the first order of a batch.
func (p *Pipeline) run(first *job) {
	if first.op == model.HoldConnection {
		p.hold(first)
		return
	}
	batch, next := p.fill(first)
	p.commit(batch)
	if next != nil {
		p.hold(next)
	}
}

// fill collects up to BatchMax orders starting with first: whatever is
// queued, and what arrives within BatchWait of first. A connection hold
// ends the batch and is returned to run after it.
func (p *Pipeline) fill(first *job) (batch []*job, hold *job) {
	batch = append(make([]*job, 0, p.cfg.BatchMax), first)
	timer := time.NewTimer(p.cfg.BatchWait)
	defer timer.Stop()
	for len(batch) < p.cfg.BatchMax {
		var j *job
		var ok bool
		select {
		case j, ok = <-p.persist: // a queued job comes first, even after the timer fired
		default:
			select {
			case j, ok = <-p.persist:
			case <-timer.C:
				return batch, nil
			}
		}
		if !ok {
			return batch, nil
		}
		if j.op == model.HoldConnection {
			return batch, j
		}
		batch = append(batch, j)
	}
	return batch, nil
}

func (p *Pipeline) hold(j *job) {
	p.persistBusy.Add(1)
	defer p.persistBusy.Add(-1)
	j.done <- result{err: p.store.HoldConnection(j.ctx, j.delay, max(1, j.conns))}
}

// commit writes a batch in one transaction. Orders whose requests already
// gave up are skipped: nobody will be told they were stored. When the batch
// fails, each order is retried on its own, so that one bad order cannot fail
// the others and every handler gets its own order's outcome.
func (p *Pipeline) commit(batch []*job) {
	p.persistBusy.Add(1)
	defer p.persistBusy.Add(-1)

	// Claim the orders whose handlers still wait; skip the rest: nobody
	// would be told they were stored.
	live := batch[:0]
	for _, j := range batch {
		if j.ctx.Err() == nil && j.state.CompareAndSwap(queued, claimed) {
			live = append(live, j)
			continue
		}
		j.state.Store(abandoned)
		p.releaseAudit(j)
		j.done <- result{err: context.Cause(j.ctx)}
	}
	if len(live) == 0 {
		return
	}
	// Lock order: two batches holding the same keys lock them in the same
	// order, so they cannot deadlock each other.
	slices.SortStableFunc(live, func(a, b *job) int { return strings.Compare(a.key, b.key) })
	links := make([]trace.Link, len(live))
	var delay, downstream time.Duration
	for i, j := range live {
		links[i] = trace.LinkFromContext(j.ctx)
		delay = max(delay, j.delay)                // one slow query per transaction
		downstream = max(downstream, j.downstream) // the batch's downstream calls run at once
	}

	ctx, cancel := context.WithTimeout(context.Background(), p.cfg.CommitTimeout)
	defer cancel()
	ctx, span := p.tracer.Start(ctx, "pipeline.batch", trace.WithNewRoot(), trace.WithLinks(links...),
		trace.WithAttributes(attribute.Int("pipeline.batch.size", len(live))))
	defer span.End()

	reqs := make([]order.Request, len(live))
	for i, j := range live {
		reqs[i] = j.req
	}
	start := time.Now()
	results, err := p.store.CreateOrders(ctx, reqs, delay, downstream)
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	p.met.Committed(ctx, outcome, len(live), time.Since(start))

	if err == nil {
		for i, j := range live {
			j.done <- result{res: results[i]}
			p.toAudit(j, results[i])
		}
		return
	}
	span.RecordError(err)
	span.SetStatus(codes.Error, "batch failed")
	if class, _ := dberr.ClassOf(err); len(live) == 1 || (class != dberr.Conflict && class != dberr.Refused) {
		// Alone, the order's own error is the answer. A batch that the
		// server did not refuse failed for another reason than what it
		// holds (the database, the connection, the deadline) and was
		// already retried by the store where that was safe (docs/reference/database-failures.md): sending it order by order would fail the
		// same way, or store orders twice.
		for _, j := range live {
			j.done <- result{err: err}
			p.releaseAudit(j)
		}
		return
	}
	p.log.Warn("batch failed, retrying its orders one by one", "size", len(live), "err", err)
	for _, j := range live {
		// The batch's context: a claimed order's handler waits for it.
		// The retry drops db_delay and the downstream wait: it isolates a
		// bad order, it does not replay the experiment.
		r, err := p.store.CreateOrder(ctx, j.req, 0, 0)
		j.done <- result{res: r, err: err}
		if err == nil {
			p.toAudit(j, r)
		} else {
			p.releaseAudit(j)
		}
	}
}
