// Package pipeline owns the staged path from the HTTP edge to Postgres used
// by the pipeline service: an intake queue, a pricing stage, a persist queue
// and a fixed set of workers that commit orders in batches.
//
//	handler --intake (QUEUE_CAPACITY)--> price --persist--> WORKERS x [batch <= BATCH_MAX, wait <= BATCH_WAIT] --> Postgres
//	                                                         --audit (AUDIT_QUEUE)--> AUDIT_WORKERS x audit write (when AUDIT_DELAY is set)
//
// With an audit stage an order is admitted only with an audit slot reserved
// for it: demand flows upstream, so a slow audit sheds load at the edge
// instead of stalling the orders already admitted behind a full audit queue.
//
// Every channel is bounded. When the workers fall behind the persist queue
// fills, pricing blocks, the intake queue fills, and Submit rejects: the
// backpressure reaches the HTTP edge as a 429 instead of piling up goroutines.
package pipeline

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/orderlab/orderlab/services/internal/audit"
	"github.com/orderlab/orderlab/services/internal/order"
	"github.com/orderlab/orderlab/services/internal/overload"
	"github.com/orderlab/orderlab/services/internal/postgres"
	"github.com/orderlab/orderlab/services/internal/telemetry"
)

// ErrClosed is returned by calls made after Close began.
var ErrClosed = fmt.Errorf("pipeline closed: %w", overload.ErrShuttingDown)

// Store is what the workers need from Postgres.
type Store interface {
	CreateOrders(ctx context.Context, rs []order.Request, delay time.Duration) ([]postgres.Result, error)
	CreateOrder(ctx context.Context, r order.Request, delay time.Duration) (postgres.Result, error)
	HoldConnection(ctx context.Context, d time.Duration) error
}

var _ Store = (*postgres.Store)(nil)

// Config sizes the pipeline.
type Config struct {
	Workers       int           // persist workers (WORKERS)
	BatchMax      int           // orders per transaction at most (BATCH_MAX)
	BatchWait     time.Duration // how long a worker waits to fill a batch (BATCH_WAIT)
	QueueCapacity int           // intake queue slots (QUEUE_CAPACITY)
	EnqueueWait   time.Duration // how long a handler waits for a slot (ENQUEUE_WAIT)
	PriceWorkers  int           // pricing goroutines
	// CommitTimeout bounds one batch transaction.
	CommitTimeout time.Duration
	// Audit, when enabled, gets each committed order in a bounded stage of
	// AuditWorkers goroutines fed by a queue of AuditQueue slots. Submit
	// reserves one of the AuditQueue+AuditWorkers slots per order and
	// rejects when none is free.
	Audit        *audit.Recorder
	AuditWorkers int
	AuditQueue   int
}

type jobKind int

const (
	placeOrder jobKind = iota
	holdConnection
)

// job is one request travelling through the stages. Its ctx carries the
// request's span and deadline.
type job struct {
	ctx   context.Context
	kind  jobKind
	input order.Input
	key   string
	req   order.Request // filled by the price stage
	delay time.Duration
	done  chan result // buffered: a worker never blocks on a gone handler
	// audit says the job holds a reserved audit slot, which passes to the
	// audit stage with the created order or is given back.
	audit bool
	// state settles, once, who owns the outcome when the handler's deadline
	// races the commit: a worker claims the job before it writes it, a
	// handler abandons it before it gives up. A claimed job's handler waits
	// for the real outcome, so a committed order is never answered 503.
	state atomic.Int32
}

const (
	queued int32 = iota
	claimed
	abandoned
)

type result struct {
	res postgres.Result
	err error
}

// Pipeline runs the stages. Start it with New, stop it with Close.
type Pipeline struct {
	cfg    Config
	store  Store
	log    *slog.Logger
	tracer trace.Tracer
	m      *metrics

	mu      sync.RWMutex // guards closed against sends on a closed intake
	closed  bool
	intake  chan *job
	persist chan *job
	audits  chan order.Order
	// auditSlots counts reserved audit slots: queued, in a worker, or held
	// by an order on its way there.
	auditSlots chan struct{}

	priceBusy, persistBusy, auditBusy atomic.Int64
	stopped                           chan struct{}
}

// New starts a pipeline over store with its metrics registered on reg.
func New(cfg Config, store Store, log *slog.Logger, reg prometheus.Registerer, tp trace.TracerProvider) (*Pipeline, error) {
	if cfg.Workers < 1 || cfg.BatchMax < 1 || cfg.QueueCapacity < 1 || cfg.PriceWorkers < 1 {
		return nil, fmt.Errorf("pipeline: workers, batch max, queue capacity and price workers must be positive: %+v", cfg)
	}
	if cfg.CommitTimeout <= 0 {
		cfg.CommitTimeout = 30 * time.Second
	}
	if cfg.AuditWorkers < 1 {
		cfg.AuditWorkers = 1
	}
	if cfg.AuditQueue < 1 {
		cfg.AuditQueue = 1
	}
	p := &Pipeline{
		cfg:    cfg,
		store:  store,
		log:    log,
		tracer: tp.Tracer("github.com/orderlab/orderlab/services/internal/pipeline"),
		intake: make(chan *job, cfg.QueueCapacity),
		// One batch's worth: beyond QUEUE_CAPACITY, what is admitted but
		// not yet committed is this, the jobs in pricing and those in the
		// workers' batches, so WORKERS=200 BATCH_MAX=1 QUEUE_CAPACITY=100
		// behaves like Tomcat's 200 threads and accept queue of 100.
		persist: make(chan *job, cfg.BatchMax),
		// Room for every reserved slot: handing an order to the stage never blocks.
		audits:     make(chan order.Order, cfg.AuditQueue+cfg.AuditWorkers),
		auditSlots: make(chan struct{}, cfg.AuditQueue+cfg.AuditWorkers),
		stopped:    make(chan struct{}),
	}
	m, err := newMetrics(reg, p)
	if err != nil {
		return nil, err
	}
	p.m = m

	var price, persist, audits sync.WaitGroup
	for range cfg.PriceWorkers {
		price.Go(p.price)
	}
	for range cfg.Workers {
		persist.Go(p.work)
	}
	if cfg.Audit.Enabled() {
		for range cfg.AuditWorkers {
			audits.Go(p.audit)
		}
	}
	go func() {
		price.Wait()
		close(p.persist) // pricing is done: let the workers drain and stop
		persist.Wait()
		close(p.audits) // no more commits: let the audit stage drain
		audits.Wait()
		close(p.stopped)
	}()
	return p, nil
}

// PlaceOrder submits an order and waits until it is committed (or failed).
// A nil error means the order is in the table.
func (p *Pipeline) PlaceOrder(ctx context.Context, in order.Input, key string, delay time.Duration) (postgres.Result, error) {
	j := &job{ctx: ctx, kind: placeOrder, input: in, key: key, delay: delay, done: make(chan result, 1)}
	if err := p.submit(ctx, j); err != nil {
		return postgres.Result{}, err
	}
	var r result
	select {
	case r = <-j.done:
	case <-ctx.Done():
		if j.state.CompareAndSwap(queued, abandoned) {
			return postgres.Result{}, ctx.Err() // no worker will write it
		}
		// A worker is writing it: wait for the outcome, which the batch's
		// CommitTimeout bounds.
		t := time.NewTimer(p.cfg.CommitTimeout + 5*time.Second)
		defer t.Stop()
		select {
		case r = <-j.done:
		case <-t.C:
			return postgres.Result{}, fmt.Errorf("order outcome unknown after %s: %w", p.cfg.CommitTimeout, ctx.Err())
		}
	}
	if r.err == nil {
		r.err = r.res.Err
	}
	return r.res, r.err
}

// HoldConnection runs a pg_sleep of d on one of the workers' connections,
// so that /work/db is bounded by the same workers as the orders.
func (p *Pipeline) HoldConnection(ctx context.Context, d time.Duration) error {
	j := &job{ctx: ctx, kind: holdConnection, delay: d, done: make(chan result, 1)}
	if err := p.submit(ctx, j); err != nil {
		return err
	}
	select {
	case r := <-j.done:
		return r.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// submit admits j: with an audit stage an order first reserves an audit
// slot, then j takes an intake slot, waiting at most EnqueueWait. Either
// one full is a rejection.
func (p *Pipeline) submit(ctx context.Context, j *job) (err error) {
	start := time.Now()
	_, span := p.tracer.Start(ctx, "pipeline.enqueue", trace.WithAttributes(
		attribute.Int("pipeline.queue.length", len(p.intake)),
		attribute.Int("pipeline.queue.capacity", cap(p.intake)),
	))
	defer span.End()
	outcome := "enqueued"
	defer func() {
		telemetry.Observe(ctx, p.m.enqueueWait.WithLabelValues(outcome), time.Since(start).Seconds())
		span.SetAttributes(attribute.String("pipeline.outcome", outcome))
	}()
	reject := func(resource string) error {
		outcome = "rejected"
		p.m.rejections.Inc()
		span.SetStatus(codes.Error, resource+" full")
		return &overload.RejectedError{Resource: resource, Waited: time.Since(start), RetryAfter: overload.RetryAfter}
	}

	if j.kind == placeOrder && p.cfg.Audit.Enabled() {
		select {
		case p.auditSlots <- struct{}{}:
			j.audit = true
			defer func() {
				if err != nil {
					p.releaseAudit(j) // not admitted: nothing will audit it
				}
			}()
		default:
			return reject("audit queue")
		}
	}

	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.closed {
		outcome = "rejected"
		return ErrClosed
	}
	select {
	case p.intake <- j:
		return nil
	default:
	}
	if p.cfg.EnqueueWait > 0 {
		t := time.NewTimer(p.cfg.EnqueueWait)
		defer t.Stop()
		select {
		case p.intake <- j:
			return nil
		case <-ctx.Done():
			outcome = "canceled"
			return ctx.Err()
		case <-t.C:
		}
	}
	return reject("queue")
}

// price is the first stage: it prices each order and fingerprints it for
// idempotency, then hands it on. Its send blocks when persist is full: that
// is the backpressure.
func (p *Pipeline) price() {
	for j := range p.intake {
		p.priceBusy.Add(1)
		if j.kind == placeOrder {
			j.req = order.NewRequest(j.input, j.key)
		}
		p.priceBusy.Add(-1)
		p.persist <- j
	}
}

// work is one persist worker: it takes a job, fills a batch with whatever
// else is queued (waiting at most BatchWait), and commits it.
func (p *Pipeline) work() {
	for first := range p.persist {
		if first.kind == holdConnection {
			p.hold(first)
			continue
		}
		batch, next := p.fill(first)
		p.commit(batch)
		if next != nil {
			p.hold(next)
		}
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
		if j.kind == holdConnection {
			return batch, j
		}
		batch = append(batch, j)
	}
	return batch, nil
}

func (p *Pipeline) hold(j *job) {
	p.persistBusy.Add(1)
	defer p.persistBusy.Add(-1)
	j.done <- result{err: p.store.HoldConnection(j.ctx, j.delay)}
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
	var delay time.Duration
	for i, j := range live {
		links[i] = trace.LinkFromContext(j.ctx)
		delay = max(delay, j.delay) // one slow query per transaction
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
	results, err := p.store.CreateOrders(ctx, reqs, delay)
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	telemetry.Observe(ctx, p.m.commitSeconds.WithLabelValues(outcome), time.Since(start).Seconds())
	p.m.batchSize.Observe(float64(len(live)))

	if err == nil {
		for i, j := range live {
			j.done <- result{res: results[i]}
			p.toAudit(j, results[i])
		}
		return
	}
	span.RecordError(err)
	span.SetStatus(codes.Error, "batch failed")
	if len(live) == 1 || !postgres.RetrySafe(err) {
		// Alone, the order's own error is the answer; and when the batch
		// may have committed (the connection broke mid-flight), sending
		// it again could store every order twice.
		for _, j := range live {
			j.done <- result{err: err}
			p.releaseAudit(j)
		}
		return
	}
	p.log.Warn("batch failed, retrying its orders one by one", "size", len(live), "err", err)
	for _, j := range live {
		// The batch's context: a claimed order's handler waits for it.
		// The retry drops db_delay: it isolates a bad order, it does not
		// replay the experiment.
		r, err := p.store.CreateOrder(ctx, j.req, 0)
		j.done <- result{res: r, err: err}
		if err == nil {
			p.toAudit(j, r)
		} else {
			p.releaseAudit(j)
		}
	}
}

// toAudit hands a newly created order, with its job's reserved slot, to the
// audit stage, after its handler has been answered. The channel has room
// for every reserved slot, so this never blocks the worker. Anything else
// (a replay, a failure) gives the slot back.
func (p *Pipeline) toAudit(j *job, r postgres.Result) {
	if !j.audit {
		return
	}
	if r.Err != nil || !r.Created {
		p.releaseAudit(j)
		return
	}
	j.audit = false // the slot now travels with the order
	p.cfg.Audit.Queued()
	p.audits <- r.Order
}

// releaseAudit gives back j's audit slot, if it holds one.
func (p *Pipeline) releaseAudit(j *job) {
	if j.audit {
		j.audit = false
		<-p.auditSlots
	}
}

// audit is one audit worker.
func (p *Pipeline) audit() {
	for o := range p.audits {
		p.auditBusy.Add(1)
		p.cfg.Audit.Write(o)
		p.auditBusy.Add(-1)
		<-p.auditSlots
	}
}

// Close stops taking work, lets every queued job finish, and returns when
// the workers have committed the last batch or ctx ends.
func (p *Pipeline) Close(ctx context.Context) error {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		close(p.intake)
	}
	p.mu.Unlock()
	select {
	case <-p.stopped:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("pipeline drain: %w (%d queued, %d in persist)", ctx.Err(), len(p.intake), len(p.persist))
	}
}
