package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/orderlab/orderlab/internal/pgtest"
	"github.com/orderlab/orderlab/internal/poll"
	"github.com/orderlab/orderlab/services/internal/audit"

	"github.com/orderlab/orderlab/services/internal/model"
	"github.com/orderlab/orderlab/services/internal/overload"
	"github.com/orderlab/orderlab/services/internal/postgres"
)

// stageGauge is a pipeline gauge of one stage.
func stageGauge(t *testing.T, reg *prometheus.Registry, name, stage string) float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if m.GetLabel()[0].GetValue() == stage {
				return m.GetGauge().GetValue()
			}
		}
	}
	t.Fatalf("no %s{stage=%q}", name, stage)
	return 0
}

// Under keyed orders from 20 goroutines the workers go 20 -> 2 -> 20 with
// the queue and batch sizes: no order fails, each is stored once, and the
// workers gauge follows.
func TestResizeUnderLoad(t *testing.T) {
	url := pgtest.New(t)
	st, err := postgres.Open(context.Background(), postgres.Config{URL: url, MaxConns: 20, StartupTimeout: 10 * time.Second},
		slog.New(slog.NewTextHandler(io.Discard, nil)), prometheus.NewRegistry(), noop.NewTracerProvider())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	cfg := Config{Workers: 20, BatchMax: 10, BatchWait: time.Millisecond, QueueCapacity: 100,
		EnqueueWait: 5 * time.Second, PriceWorkers: 2, AuditWorkers: 1, AuditQueue: 1}
	p, reg := newPipeline(t, cfg, st)
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var placed, rejected atomic.Int64
	for w := range 20 {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				_, err := place(context.Background(), p, input(i), fmt.Sprintf("k-%d-%d", w, i), time.Millisecond)
				var rej *overload.RejectedError
				switch {
				case err == nil:
					placed.Add(1)
				case errors.As(err, &rej):
					rejected.Add(1)
				default:
					t.Errorf("order during a resize: %v", err)
				}
			}
		})
	}
	for _, step := range []struct{ workers, batch, queue int }{{2, 3, 10}, {20, 10, 100}} {
		time.Sleep(300 * time.Millisecond)
		c := p.Config()
		c.Workers, c.BatchMax, c.QueueCapacity = step.workers, step.batch, step.queue
		if err := p.Resize(c); err != nil {
			t.Fatal(err)
		}
		if got := p.Config(); got.Workers != step.workers || got.BatchMax != step.batch || got.QueueCapacity != step.queue {
			t.Errorf("Config after Resize = %+v", got)
		}
		if got := stageGauge(t, reg, "orderlab_pipeline_queue_capacity", "intake"); got != float64(step.queue) {
			t.Errorf("intake capacity gauge = %v, want %d", got, step.queue)
		}
		if got := stageGauge(t, reg, "orderlab_pipeline_queue_capacity", "persist"); got != float64(step.batch) {
			t.Errorf("persist capacity gauge = %v, want BATCH_MAX %d", got, step.batch)
		}
		poll.Until(t, 10*time.Second, fmt.Sprintf("the persist workers gauge to follow WORKERS=%d", step.workers), func() error {
			if got := stageGauge(t, reg, "orderlab_pipeline_workers", "persist"); got != float64(step.workers) {
				return fmt.Errorf("persist workers gauge = %v", got)
			}
			return nil
		})
	}
	time.Sleep(200 * time.Millisecond)
	stop()
	wg.Wait()
	if rejected.Load() != 0 || placed.Load() == 0 {
		t.Errorf("%d placed, %d rejected: want none rejected with a 5s ENQUEUE_WAIT", placed.Load(), rejected.Load())
	}
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var stored int64
	if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM orders").Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if stored != placed.Load() {
		t.Errorf("%d orders stored, %d acknowledged", stored, placed.Load())
	}
}

// A queue shrunk below its depth keeps every queued job and admits nobody
// until it has drained under the new bound.
func TestResizeQueueBelowDepth(t *testing.T) {
	release := make(chan struct{})
	// ENQUEUE_WAIT: every hold gets in, however the admissions and the
	// price stage interleave.
	cfg := Config{Workers: 1, BatchMax: 1, QueueCapacity: 4, EnqueueWait: time.Minute, PriceWorkers: 1, AuditWorkers: 1, AuditQueue: 1}
	p, reg := newPipeline(t, cfg, blockingStore{release: release})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock) // before the pipeline's Close, should the test fail first
	// One in the worker, one in the hand-off buffer, one in pricing, four
	// in intake.
	const jobs = 7
	errs := make(chan error, jobs)
	for range jobs {
		go func() { errs <- hold(context.Background(), p, time.Millisecond) }()
	}
	poll.Until(t, 5*time.Second, "four jobs in the intake", func() error {
		if p.intake.len() != 4 {
			return fmt.Errorf("intake holds %d jobs, want 4", p.intake.len())
		}
		return nil
	})
	c := p.Config()
	c.QueueCapacity, c.EnqueueWait = 2, 0 // and reject at once from now on
	if err := p.Resize(c); err != nil {
		t.Fatal(err)
	}
	if got := stageGauge(t, reg, "orderlab_pipeline_queue_capacity", "intake"); got != 2 {
		t.Errorf("intake capacity gauge = %v, want 2", got)
	}
	var rej *overload.RejectedError
	if _, err := p.Admit(context.Background(), model.PlaceOrder); !errors.As(err, &rej) {
		t.Fatalf("Admit over a shrunk queue = %v, want a rejection", err)
	}
	unblock()
	for range jobs {
		if err := <-errs; err != nil {
			t.Errorf("a queued job after the shrink: %v", err)
		}
	}
	a, err := p.Admit(context.Background(), model.PlaceOrder)
	if err != nil {
		t.Fatalf("Admit after the queue drained: %v", err)
	}
	a.Release()
	if got := testutil.ToFloat64(p.m.rejections.WithLabelValues(ReasonIntakeFull)); got != 1 {
		t.Errorf("intake_full rejections = %v, want 1", got)
	}
}

// A bad value changes nothing; a Resize once Close began is refused; an
// audit stage started with auditing off follows AUDIT_WORKERS.
func TestResizeValidates(t *testing.T) {
	cfg := Config{Workers: 2, BatchMax: 2, QueueCapacity: 2, PriceWorkers: 1, AuditWorkers: 1, AuditQueue: 1}
	p, reg := newPipeline(t, cfg, blockingStore{release: make(chan struct{})})
	for _, bad := range []func(*Config){
		func(c *Config) { c.Workers = 0 }, func(c *Config) { c.BatchMax = 0 }, func(c *Config) { c.QueueCapacity = 0 },
		func(c *Config) { c.BatchWait = -1 }, func(c *Config) { c.EnqueueWait = -1 },
		func(c *Config) { c.AuditWorkers = 0 }, func(c *Config) { c.AuditQueue = 0 },
	} {
		c := p.Config()
		bad(&c)
		if err := p.Resize(c); err == nil {
			t.Errorf("Resize(%+v) accepted", c)
		}
	}
	if got := p.Config(); got.Workers != 2 || got.QueueCapacity != 2 || p.slots.Size() != 2 {
		t.Errorf("a refused Resize changed the pipeline: %+v", got)
	}
	if n, err := testutil.GatherAndCount(reg, "orderlab_pipeline_workers"); err != nil || n != 2 {
		t.Errorf("workers series = %d, %v; want intake and persist (no Recorder, no audit stage)", n, err)
	}
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := p.Resize(p.Config()); !errors.Is(err, ErrClosed) {
		t.Errorf("Resize after Close = %v, want ErrClosed", err)
	}
}

// An audit stage started with AUDIT_DELAY=0 audits the orders placed after
// SetDelay, and its queue bound follows AUDIT_QUEUE.
func TestAuditLive(t *testing.T) {
	rec, err := audit.New(0, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Workers: 1, BatchMax: 1, QueueCapacity: 4, PriceWorkers: 1, Audit: rec, AuditWorkers: 1, AuditQueue: 1}
	p, reg := newPipeline(t, cfg, openStore(t))
	if got := stageGauge(t, reg, "orderlab_pipeline_workers", "audit"); got != 1 {
		t.Errorf("audit workers gauge = %v with auditing off, want 1", got)
	}
	rec.SetDelay(2 * time.Second)
	for i := range 2 { // one in the audit worker, one queued
		if _, err := place(context.Background(), p, input(i), "", 0); err != nil {
			t.Fatal(err)
		}
	}
	var rej *overload.RejectedError
	if _, err := p.Admit(context.Background(), model.PlaceOrder); !errors.As(err, &rej) || rej.Resource != "audit queue" {
		t.Fatalf("a third order with two audit writes pending = %v, want an audit queue rejection", err)
	}
	c := p.Config()
	c.AuditQueue = 2
	if err := p.Resize(c); err != nil {
		t.Fatal(err)
	}
	if got := stageGauge(t, reg, "orderlab_pipeline_queue_capacity", "audit"); got != 3 {
		t.Errorf("audit capacity gauge = %v after AUDIT_QUEUE=2, want 3", got)
	}
	a, err := p.Admit(context.Background(), model.PlaceOrder)
	if err != nil {
		t.Fatalf("a third order after AUDIT_QUEUE=2: %v", err)
	}
	a.Release()
}
