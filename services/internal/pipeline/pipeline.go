// Package pipeline owns the staged path from the HTTP API to Postgres used
// by the pipeline service, its concurrency model (a model.Model): stages
// joined by bounded channels, an intake queue, a pricing stage, a persist
// queue and a fixed set of workers that commit orders in batches, and an
// optional audit stage. Reads by id are not staged: they go straight to
// the store.
//
//	Admit (slot) --> handler decodes --> intake (QUEUE_CAPACITY) --> price --> persist (BATCH_MAX) --> WORKERS x [batch <= BATCH_MAX, wait <= BATCH_WAIT] --> Postgres
//	                                                                                                   --> audits (AUDIT_QUEUE) --> AUDIT_WORKERS x audit write (AUDIT_DELAY)
//
// The files follow the stages: admission.go (Admit, tickets, rejections,
// Retry-After), request.go (what an admitted request does: PlaceOrder and
// HoldConnection send a job to intake and wait for its outcome), price.go,
// persist.go (batching and commits), audit.go, and this file
// (configuration, start and Close).
//
// A request reserves its intake slot before its body is read (a send on
// slots, a channel of QUEUE_CAPACITY tokens, with a select that gives up at
// once or after ENQUEUE_WAIT), so a rejection costs no decoding and the
// job's later send on intake never blocks. With an audit stage an order
// reserves its audit slot then too: demand flows upstream, so a slow audit
// sheds load at the API instead of stalling the orders admitted behind a
// full audit queue. When the workers fall behind, persist fills, pricing
// blocks on its send, intake fills, and Admit rejects: the backpressure
// reaches the API as a 429 instead of piling up goroutines.
//
// A Pipeline's sizes never change: a live change of its knobs builds a new
// Pipeline, and this one is closed once its requests are answered
// (services/internal/live, model.go).
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
	"github.com/orderlab/orderlab/services/internal/model"
	"github.com/orderlab/orderlab/services/internal/order"
	"github.com/orderlab/orderlab/services/internal/overload"
)

// Store is what the pipeline needs from Postgres (a *postgres.Store): the
// workers' writes and holds, and the reads that go straight to it.
type Store interface {
	CreateOrders(ctx context.Context, rs []order.Request, delay, downstream time.Duration) ([]order.Result, error)
	CreateOrder(ctx context.Context, r order.Request, delay, downstream time.Duration) (order.Result, error)
	HoldConnection(ctx context.Context, d time.Duration, conns int) error
	GetOrder(ctx context.Context, id int64) (order.Order, error)
}

var _ model.Model = (*Pipeline)(nil)

// Config sizes the pipeline.
type Config struct {
	Workers       int           // persist workers (WORKERS)
	BatchMax      int           // orders per transaction at most (BATCH_MAX)
	BatchWait     time.Duration // how long a worker waits to fill a batch (BATCH_WAIT)
	QueueCapacity int           // intake queue slots (QUEUE_CAPACITY)
	EnqueueWait   time.Duration // how long Admit waits for a slot (ENQUEUE_WAIT)
	PriceWorkers  int           // pricing goroutines
	CommitTimeout time.Duration // bounds one batch transaction (REQUEST_TIMEOUT)
	// Audit, when enabled, gets each committed order in a bounded stage of
	// AuditWorkers goroutines fed by a queue of AuditQueue slots. Admit
	// reserves one of the AuditQueue+AuditWorkers slots per order and
	// rejects when none is free.
	Audit        *audit.Recorder
	AuditWorkers int
	AuditQueue   int
}

// Pipeline runs the stages. Start it with New, stop it with Close.
type Pipeline struct {
	cfg    Config
	store  Store
	log    *slog.Logger
	tracer trace.Tracer
	met    Metrics

	mu     sync.RWMutex // guards closed against sends on a closed intake
	closed bool
	// slots holds a token per reserved intake slot: sent by Admit, taken
	// back by the price stage when it receives the job from intake (or
	// when the request leaves without sending one). intake has room for
	// every token, so an admitted job's send never blocks.
	slots  chan struct{}
	intake chan *job
	// persist is the hand-off from pricing to the workers: one batch's
	// worth (BATCH_MAX).
	persist chan *job
	// auditSlots holds a token per reserved audit slot
	// (AUDIT_QUEUE+AUDIT_WORKERS): queued, in a worker, or held by an order
	// on its way there; audits has room for every one.
	auditSlots chan struct{}
	audits     chan order.Order
	// intakeReleased and auditReleased measure how fast the intake and the
	// audit stage free slots, for Retry-After.
	intakeReleased, auditReleased *overload.ReleaseRate

	priceBusy, persistBusy, auditBusy atomic.Int64
	stopped                           chan struct{}
}

// Metrics are told what a service's Pipelines do (pipelinemetrics exports them).
type Metrics interface {
	Running(p *Pipeline) // p is the newest Pipeline
	Enqueued(ctx context.Context, outcome string, waited time.Duration)
	Rejected(reason string)
	Committed(ctx context.Context, outcome string, size int, took time.Duration)
}

// Stage is what one stage holds now: its input queue and its goroutines.
type Stage struct{ Queued, Capacity, Workers, Busy int }

// Stages are the intake (pricing), persist and audit stages now.
func (p *Pipeline) Stages() (intake, persist, audit Stage) {
	return Stage{len(p.intake), cap(p.intake), p.cfg.PriceWorkers, int(p.priceBusy.Load())},
		Stage{len(p.persist), cap(p.persist), p.cfg.Workers, int(p.persistBusy.Load())},
		Stage{len(p.audits), cap(p.auditSlots), p.cfg.AuditWorkers, int(p.auditBusy.Load())}
}

// New starts a pipeline over store that reports to met.
func New(cfg Config, store Store, log *slog.Logger, met Metrics, tp trace.TracerProvider) (*Pipeline, error) {
	if cfg.Workers < 1 || cfg.BatchMax < 1 || cfg.QueueCapacity < 1 || cfg.PriceWorkers < 1 {
		return nil, fmt.Errorf("pipeline: workers, batch max, queue capacity and price workers must be positive: %+v", cfg)
	}
	if cfg.CommitTimeout <= 0 {
		cfg.CommitTimeout = 30 * time.Second
	}
	cfg.AuditWorkers, cfg.AuditQueue = max(cfg.AuditWorkers, 1), max(cfg.AuditQueue, 1)
	auditSlots := cfg.AuditQueue + cfg.AuditWorkers
	p := &Pipeline{
		cfg:    cfg,
		store:  store,
		log:    log,
		tracer: tp.Tracer("github.com/orderlab/orderlab/services/internal/pipeline"),
		met:    met,
		slots:  make(chan struct{}, cfg.QueueCapacity),
		intake: make(chan *job, cfg.QueueCapacity),
		// One batch's worth: beyond QUEUE_CAPACITY, what is admitted but
		// not yet committed is this, the jobs in pricing and those in the
		// workers' batches, so WORKERS=200 BATCH_MAX=1 QUEUE_CAPACITY=100
		// behaves like Tomcat's 200 threads and accept queue of 100.
		persist:        make(chan *job, cfg.BatchMax),
		auditSlots:     make(chan struct{}, auditSlots),
		audits:         make(chan order.Order, auditSlots),
		intakeReleased: overload.NewReleaseRate(),
		auditReleased:  overload.NewReleaseRate(),
		stopped:        make(chan struct{}),
	}
	met.Running(p)

	var price, workers, auditors sync.WaitGroup
	for range cfg.PriceWorkers {
		price.Go(p.price)
	}
	for range cfg.Workers {
		workers.Go(p.persistWorker)
	}
	// The audit stage runs whenever there is a Recorder, so that
	// AUDIT_DELAY can turn auditing on live (audit.Recorder.SetDelay).
	if cfg.Audit != nil {
		for range cfg.AuditWorkers {
			auditors.Go(p.audit)
		}
	}
	go func() {
		price.Wait()
		close(p.persist) // pricing is done: let the workers drain and stop
		workers.Wait()
		close(p.audits) // no more commits: let the audit stage drain
		auditors.Wait()
		close(p.stopped)
	}()
	return p, nil
}

// Close stops taking requests, lets every queued job finish, and returns when
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
