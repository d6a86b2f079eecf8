// Package pipeline owns the staged path from the HTTP edge to Postgres used
// by the pipeline service, its concurrency model (a model.Model):
// admission to an intake queue, a pricing stage, a persist queue and a
// fixed set of workers that commit orders in batches, and an optional audit
// stage. Reads by id are not staged: they go straight to the store.
//
//	Admit (slot in intake) --> handler decodes --> intake (QUEUE_CAPACITY) --> price --> persist --> WORKERS x [batch <= BATCH_MAX, wait <= BATCH_WAIT] --> Postgres
//	                                                                                                   --> audit (AUDIT_QUEUE) --> AUDIT_WORKERS x audit write (with AUDIT_DELAY)
//
// The files follow the stages: admission.go (Admit, tickets, rejections,
// Retry-After), request.go (what an admitted request does: PlaceOrder and
// HoldConnection enqueue a job with the ticket's slots and wait for its
// outcome), price.go, persist.go (batching and commits), audit.go, and this
// file (configuration, start and Close).
//
// A request reserves its intake slot before its body is read, so a
// rejection costs no decoding; with an audit stage an order also reserves
// its audit slot then: demand flows upstream, so a slow audit sheds load at
// the edge instead of stalling the orders already admitted behind a full
// audit queue.
//
// Every queue is bounded, by a gate (services/internal/gate). When the workers fall behind the persist queue
// fills, pricing blocks, the intake queue fills, and Admit rejects: the
// backpressure reaches the HTTP edge as a 429 instead of piling up goroutines.
package pipeline

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/orderlab/orderlab/services/internal/audit"
	"github.com/orderlab/orderlab/services/internal/gate"
	"github.com/orderlab/orderlab/services/internal/model"
	"github.com/orderlab/orderlab/services/internal/order"
	"github.com/orderlab/orderlab/services/internal/overload"
	"github.com/orderlab/orderlab/services/internal/postgres"
)

// Store is what the pipeline needs from Postgres: the workers' writes and
// holds, and the reads that go straight to it.
type Store interface {
	CreateOrders(ctx context.Context, rs []order.Request, delay, downstream time.Duration) ([]order.Result, error)
	CreateOrder(ctx context.Context, r order.Request, delay, downstream time.Duration) (order.Result, error)
	HoldConnection(ctx context.Context, d time.Duration, conns int) error
	GetOrder(ctx context.Context, id int64) (order.Order, error)
}

var (
	_ Store       = (*postgres.Store)(nil)
	_ model.Model = (*Pipeline)(nil)
)

// Config sizes the pipeline.
type Config struct {
	Workers       int           // persist workers (WORKERS)
	BatchMax      int           // orders per transaction at most (BATCH_MAX)
	BatchWait     time.Duration // how long a worker waits to fill a batch (BATCH_WAIT)
	QueueCapacity int           // intake queue slots (QUEUE_CAPACITY)
	EnqueueWait   time.Duration // how long Admit waits for a slot (ENQUEUE_WAIT)
	PriceWorkers  int           // pricing goroutines
	// CommitTimeout bounds one batch transaction.
	CommitTimeout time.Duration
	// Audit, when enabled, gets each committed order in a bounded stage of
	// AuditWorkers goroutines fed by a queue of AuditQueue slots. Admit
	// reserves one of the AuditQueue+AuditWorkers slots per order and
	// rejects when none is free.
	Audit        *audit.Recorder
	AuditWorkers int
	AuditQueue   int
}

// maxHandoff is the room made in the persist channel for a BATCH_MAX that
// grows live; beyond it a price worker's send waits for room, which is
// backpressure all the same.
const maxHandoff = 1024

// Pipeline runs the stages. Start it with New, stop it with Close. Its
// sizes never change: a live change of its knobs builds a new Pipeline
// (services/internal/app, generations.go).
type Pipeline struct {
	cfg    Config
	store  Store
	log    *slog.Logger
	tracer trace.Tracer
	m      *Metrics

	mu     sync.RWMutex // guards closed against sends on a closed intake
	closed bool
	// slots holds one permit per reserved intake slot (QUEUE_CAPACITY):
	// taken by Admit, given back when the price stage takes the job off
	// intake (or when the request leaves without enqueueing). intake is a
	// queue with no bound of its own, so an admitted job's push never
	// blocks.
	slots   *gate.Gate
	intake  *fifo[*job]
	persist chan *job
	// handoff bounds persist to BATCH_MAX jobs: the price stage takes a
	// permit before it sends, a worker gives it back when it receives.
	handoff *gate.Gate
	audits  *fifo[order.Order]
	// auditSlots counts reserved audit slots (AUDIT_QUEUE+AUDIT_WORKERS):
	// queued, in a worker, or held by an order on its way there.
	auditSlots *gate.Gate
	// workers and auditors are the persist and audit goroutines.
	workers, auditors *crew
	// intakeReleased and auditReleased measure how fast the intake and the
	// audit stage free slots, for Retry-After.
	intakeReleased, auditReleased *overload.ReleaseRate

	priceBusy, persistBusy, auditBusy atomic.Int64
	stopped                           chan struct{}
}

// New starts a pipeline over store that reports to met.
func New(cfg Config, store Store, log *slog.Logger, met *Metrics, tp trace.TracerProvider) (*Pipeline, error) {
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
		slots:  gate.New(cfg.QueueCapacity),
		intake: newFIFO[*job](),
		// One batch's worth (handoff): beyond QUEUE_CAPACITY, what is
		// admitted but not yet committed is this, the jobs in pricing and
		// those in the workers' batches, so WORKERS=200 BATCH_MAX=1
		// QUEUE_CAPACITY=100 behaves like Tomcat's 200 threads and accept
		// queue of 100. The channel has room for a BATCH_MAX raised live up
		// to maxHandoff.
		persist:        make(chan *job, max(cfg.BatchMax, maxHandoff)),
		handoff:        gate.New(cfg.BatchMax),
		audits:         newFIFO[order.Order](),
		auditSlots:     gate.New(cfg.AuditQueue + cfg.AuditWorkers),
		intakeReleased: overload.NewReleaseRate(),
		auditReleased:  overload.NewReleaseRate(),
		stopped:        make(chan struct{}),
	}
	p.workers = newCrew(nil)
	p.auditors = newCrew(p.audits.wake)
	p.m = met
	met.cur.Store(p)

	var price sync.WaitGroup
	for range cfg.PriceWorkers {
		price.Go(p.price)
	}
	p.workers.resize(cfg.Workers, p.persistWorker)
	// The audit stage runs whenever there is a Recorder, so that
	// AUDIT_DELAY can turn auditing on live (audit.Recorder.SetDelay).
	if cfg.Audit != nil {
		p.auditors.resize(cfg.AuditWorkers, p.audit)
	}
	go func() {
		price.Wait()
		close(p.persist) // pricing is done: let the workers drain and stop
		p.workers.wg.Wait()
		p.audits.close() // no more commits: let the audit stage drain
		p.auditors.wg.Wait()
		close(p.stopped)
	}()
	return p, nil
}

// Close stops taking work, lets every queued job finish, and returns when
// the workers have committed the last batch or ctx ends.
func (p *Pipeline) Close(ctx context.Context) error {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		p.intake.close()
	}
	p.mu.Unlock()
	select {
	case <-p.stopped:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("pipeline drain: %w (%d queued, %d in persist)", ctx.Err(), p.intake.len(), len(p.persist))
	}
}
