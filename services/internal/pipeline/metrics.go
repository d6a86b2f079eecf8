package pipeline

import (
	"github.com/orderlab/orderlab/services/internal/telemetry"

	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	enqueueWait   *prometheus.HistogramVec
	rejections    *prometheus.CounterVec
	batchSize     prometheus.Histogram
	commitSeconds *prometheus.HistogramVec
}

func newMetrics(reg prometheus.Registerer, p *Pipeline) (*metrics, error) {
	m := &metrics{
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
	stage := func(name string, queue func() int, capacity, workers func() int, busy func() int64) []prometheus.Collector {
		l := prometheus.Labels{"stage": name}
		return []prometheus.Collector{
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "orderlab_pipeline_queue_length", ConstLabels: l,
				Help: "Items waiting in the stage's input queue."}, func() float64 { return float64(queue()) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "orderlab_pipeline_queue_capacity", ConstLabels: l,
				Help: "Capacity of the stage's input queue (live: QUEUE_CAPACITY, AUDIT_QUEUE+AUDIT_WORKERS)."}, func() float64 { return float64(capacity()) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "orderlab_pipeline_workers", ConstLabels: l,
				Help: "Goroutines running the stage (live: WORKERS, AUDIT_WORKERS)."}, func() float64 { return float64(workers()) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "orderlab_pipeline_workers_busy", ConstLabels: l,
				Help: "Of the stage's goroutines, those working on an item now."}, func() float64 { return float64(busy()) }),
		}
	}
	fixed := func(n int) func() int { return func() int { return n } }
	running := func(c *crew) func() int { return func() int { return int(c.running.Load()) } }
	for _, r := range []string{ReasonIntakeFull, ReasonAuditFull} {
		m.rejections.WithLabelValues(r) // every reason is exported from the start
	}
	cs := []prometheus.Collector{m.enqueueWait, m.rejections, m.batchSize, m.commitSeconds}
	cs = append(cs, stage("intake", p.intake.len, p.slots.Size, fixed(p.cfg.PriceWorkers), p.priceBusy.Load)...)
	cs = append(cs, stage("persist", func() int { return len(p.persist) }, fixed(cap(p.persist)), running(p.workers), p.persistBusy.Load)...)
	if p.cfg.Audit != nil {
		cs = append(cs, stage("audit", p.audits.len, p.auditSlots.Size, running(p.auditors), p.auditBusy.Load)...)
	}
	if err := telemetry.Register(reg, cs...); err != nil {
		return nil, err
	}
	return m, nil
}
