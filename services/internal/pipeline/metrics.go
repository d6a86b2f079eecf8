package pipeline

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/orderlab/orderlab/services/internal/telemetry"
)

// Metrics are the pipeline's metrics, registered once and shared by every
// Pipeline a service builds: during a live change two Pipelines hold
// orders (the new one admitting, the old one finishing); the gauges show
// the newest one's stages.
type Metrics struct {
	cur           atomic.Pointer[Pipeline]
	enqueueWait   *prometheus.HistogramVec
	rejections    *prometheus.CounterVec
	batchSize     prometheus.Histogram
	commitSeconds *prometheus.HistogramVec
}

// NewMetrics registers the pipeline's metrics on reg; audit says whether
// the service runs an audit stage.
func NewMetrics(reg prometheus.Registerer, audit bool) (*Metrics, error) {
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
	gauge := func(stage, name, help string, f func(*Pipeline) int) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: prometheus.Labels{"stage": stage}},
			func() float64 {
				if p := m.cur.Load(); p != nil {
					return float64(f(p))
				}
				return 0
			})
	}
	stage := func(name string, st func(*Pipeline) stageStats) []prometheus.Collector {
		return []prometheus.Collector{
			gauge(name, "orderlab_pipeline_queue_length", "Items waiting in the stage's input queue.",
				func(p *Pipeline) int { return st(p).queued }),
			gauge(name, "orderlab_pipeline_queue_capacity", "Capacity of the stage's input queue (QUEUE_CAPACITY, AUDIT_QUEUE+AUDIT_WORKERS).",
				func(p *Pipeline) int { return st(p).capacity }),
			gauge(name, "orderlab_pipeline_workers", "Goroutines running the stage (WORKERS, AUDIT_WORKERS).",
				func(p *Pipeline) int { return st(p).workers }),
			gauge(name, "orderlab_pipeline_workers_busy", "Of the stage's goroutines, those working on an item now.",
				func(p *Pipeline) int { return st(p).busy }),
		}
	}
	for _, r := range []string{ReasonIntakeFull, ReasonAuditFull} {
		m.rejections.WithLabelValues(r) // every reason is exported from the start
	}
	cs := []prometheus.Collector{m.enqueueWait, m.rejections, m.batchSize, m.commitSeconds}
	cs = append(cs, stage("intake", (*Pipeline).intakeStats)...)
	cs = append(cs, stage("persist", (*Pipeline).persistStats)...)
	if audit {
		cs = append(cs, stage("audit", (*Pipeline).auditStats)...)
	}
	if err := telemetry.Register(reg, cs...); err != nil {
		return nil, err
	}
	return m, nil
}

// stageStats is what a stage's gauges show.
type stageStats struct{ queued, capacity, workers, busy int }

func (p *Pipeline) intakeStats() stageStats {
	return stageStats{len(p.intake), cap(p.intake), p.cfg.PriceWorkers, int(p.priceBusy.Load())}
}

func (p *Pipeline) persistStats() stageStats {
	return stageStats{len(p.persist), cap(p.persist), p.cfg.Workers, int(p.persistBusy.Load())}
}

func (p *Pipeline) auditStats() stageStats {
	return stageStats{len(p.audits), cap(p.auditSlots), p.cfg.AuditWorkers, int(p.auditBusy.Load())}
}
