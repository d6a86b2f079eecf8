// Package pipelinemetrics exports what the pipeline service's Pipelines do
// (services/internal/pipeline) as Prometheus metrics: the waits for
// admission by outcome, the rejections by reason, each stage's queue and
// goroutines, and the batches committed.
package pipelinemetrics

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/orderlab/orderlab/services/internal/pipeline"
	"github.com/orderlab/orderlab/services/internal/telemetry"
)

// Metrics are a service's pipeline metrics, registered once and shared by
// every Pipeline it builds: during a live change two Pipelines hold orders
// (the new one admitting, the old one finishing); the gauges show the
// newest one's stages.
type Metrics struct {
	cur           atomic.Pointer[pipeline.Pipeline]
	enqueueWait   *prometheus.HistogramVec
	rejections    *prometheus.CounterVec
	batchSize     prometheus.Histogram
	commitSeconds *prometheus.HistogramVec
}

var _ pipeline.Metrics = (*Metrics)(nil)

// New registers the pipeline's metrics on reg; audit says whether the
// service runs an audit stage.
func New(reg prometheus.Registerer, audit bool) (*Metrics, error) {
	m := &Metrics{
		enqueueWait: prometheus.NewHistogramVec(telemetry.DurationHistogram("orderlab_pipeline_enqueue_wait_seconds",
			"Time a request waited for admission to the intake queue, by outcome (enqueued, rejected, canceled, closed: the service was shutting down).",
			[]float64{0.00001, 0.0001, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}), []string{"outcome"}),
		rejections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "orderlab_pipeline_rejections_total",
			Help: "Requests answered 429 at admission, by reason (intake_full: no intake slot; audit_full: no audit slot for an order).",
		}, []string{"reason"}),
		batchSize: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "orderlab_pipeline_batch_size",
			Help:    "Orders committed per transaction.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 9), // 1..256
		}),
		commitSeconds: prometheus.NewHistogramVec(telemetry.DurationHistogram("orderlab_pipeline_batch_commit_seconds",
			"Time to run and commit one batch transaction, by outcome (ok, error).",
			[]float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}), []string{"outcome"}),
	}
	// A stage's gauges read the newest Pipeline's.
	stage := func(name string, of func(*pipeline.Pipeline) pipeline.Stage) []prometheus.Collector {
		gauge := func(metric, help string, f func(pipeline.Stage) int) prometheus.Collector {
			return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: metric, Help: help, ConstLabels: prometheus.Labels{"stage": name}},
				func() float64 {
					if p := m.cur.Load(); p != nil {
						return float64(f(of(p)))
					}
					return 0
				})
		}
		return []prometheus.Collector{
			gauge("orderlab_pipeline_queue_length", "Items waiting in the stage's input queue.",
				func(s pipeline.Stage) int { return s.Queued }),
			gauge("orderlab_pipeline_queue_capacity", "Capacity of the stage's input queue (QUEUE_CAPACITY, AUDIT_QUEUE+AUDIT_WORKERS).",
				func(s pipeline.Stage) int { return s.Capacity }),
			gauge("orderlab_pipeline_workers", "Goroutines running the stage (WORKERS, AUDIT_WORKERS).",
				func(s pipeline.Stage) int { return s.Workers }),
			gauge("orderlab_pipeline_workers_busy", "Of the stage's goroutines, those working on an item now.",
				func(s pipeline.Stage) int { return s.Busy }),
		}
	}
	for _, r := range []string{pipeline.ReasonIntakeFull, pipeline.ReasonAuditFull} {
		m.rejections.WithLabelValues(r) // every reason is exported from the start
	}
	cs := []prometheus.Collector{m.enqueueWait, m.rejections, m.batchSize, m.commitSeconds}
	cs = append(cs, stage("intake", func(p *pipeline.Pipeline) pipeline.Stage { s, _, _ := p.Stages(); return s })...)
	cs = append(cs, stage("persist", func(p *pipeline.Pipeline) pipeline.Stage { _, s, _ := p.Stages(); return s })...)
	if audit {
		cs = append(cs, stage("audit", func(p *pipeline.Pipeline) pipeline.Stage { _, _, s := p.Stages(); return s })...)
	}
	if err := telemetry.Register(reg, cs...); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *Metrics) Running(p *pipeline.Pipeline) { m.cur.Store(p) }

func (m *Metrics) Enqueued(ctx context.Context, outcome string, waited time.Duration) {
	telemetry.Observe(ctx, m.enqueueWait.WithLabelValues(outcome), waited.Seconds())
}

func (m *Metrics) Rejected(reason string) { m.rejections.WithLabelValues(reason).Inc() }

func (m *Metrics) Committed(ctx context.Context, outcome string, size int, took time.Duration) {
	telemetry.Observe(ctx, m.commitSeconds.WithLabelValues(outcome), took.Seconds())
	m.batchSize.Observe(float64(size))
}
