// Package limitermetrics exports what the semaphore service's Limiters do
// (services/internal/limiter) as Prometheus metrics: the waits for a
// permit by outcome, the rejections by reason, the permits in use, the
// waiters, the limit and what an adaptive limit decided on.
package limitermetrics

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/orderlab/orderlab/services/internal/limiter"
	"github.com/orderlab/orderlab/services/internal/telemetry"
)

// Metrics are a service's limiter metrics, registered once and shared by
// every Limiter it builds: during a live change two Limiters hold permits
// (the new one admitting, the old one finishing), and the gauges count
// both; the limit shown is the newest Limiter's.
type Metrics struct {
	cur            atomic.Pointer[limiter.Limiter]
	inUse, waiters atomic.Int64

	waitSeconds *prometheus.HistogramVec
	rejections  *prometheus.CounterVec
}

var _ limiter.Metrics = (*Metrics)(nil)

// New registers the limiter's metrics on reg.
func New(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		waitSeconds: prometheus.NewHistogramVec(telemetry.DurationHistogram("orderlab_limiter_wait_seconds",
			"Time waited for a permit, by outcome (acquired, rejected, canceled).",
			[]float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}), []string{"outcome"}),
		rejections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "orderlab_limiter_rejections_total",
			Help: "Requests answered 429 by the limiter, by reason (at_limit, queue_full, wait_timeout).",
		}, []string{"reason"}),
	}
	for _, r := range []string{limiter.ReasonAtLimit, limiter.ReasonQueueFull, limiter.ReasonWaitTimeout} {
		m.rejections.WithLabelValues(r) // every reason is exported from the start
	}
	err := telemetry.Register(reg, m.waitSeconds, m.rejections, limitCollector{m},
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "orderlab_limiter_permits_in_use", Help: "Permits held now: requests in flight past the limiter.",
		}, func() float64 { return float64(m.inUse.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "orderlab_limiter_waiters", Help: "Requests queued for a permit now.",
		}, func() float64 { return float64(m.waiters.Load()) }),
	)
	if err != nil {
		return nil, err
	}
	return m, nil
}

func (m *Metrics) Limiting(l *limiter.Limiter) { m.cur.Store(l) }

func (m *Metrics) Waited(ctx context.Context, outcome string, d time.Duration) {
	telemetry.Observe(ctx, m.waitSeconds.WithLabelValues(outcome), d.Seconds())
}

func (m *Metrics) Rejected(reason string) { m.rejections.WithLabelValues(reason).Inc() }
func (m *Metrics) InUse(delta int)        { m.inUse.Add(int64(delta)) }
func (m *Metrics) Waiting(delta int)      { m.waiters.Add(int64(delta)) }

// limitCollector exports orderlab_limiter_limit, the current limit with
// the current mode as its label: after a change of mode the series of the
// old mode ends and the new one's begins.
type limitCollector struct{ m *Metrics }

var limitDesc = prometheus.NewDesc("orderlab_limiter_limit",
	"The current limit on permits: LIMIT when fixed, the adaptive limit's current value when LIMIT=adaptive.",
	[]string{"mode"}, nil)

// signalDesc is what the pool-watching adaptive limit last decided on
// (limiter.Limiter.Signals), exported while it is the limit.
var signalDesc = prometheus.NewDesc("orderlab_limiter_signal",
	"What the adaptive limit on the pool decided on in its last window: signal=pool_wait_share, the share of pool acquires that waited (backs off above 0.02); signal=hold_vs_baseline, the mean permit hold over the baseline hold (backs off above 1.5; 0 with too few holds).",
	[]string{"signal"}, nil)

func (c limitCollector) Describe(ch chan<- *prometheus.Desc) { ch <- limitDesc; ch <- signalDesc }

func (c limitCollector) Collect(ch chan<- prometheus.Metric) {
	l := c.m.cur.Load()
	if l == nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(limitDesc, prometheus.GaugeValue, float64(l.Limit()), l.Mode())
	if share, hold, ok := l.Signals(); ok {
		ch <- prometheus.MustNewConstMetric(signalDesc, prometheus.GaugeValue, share, "pool_wait_share")
		ch <- prometheus.MustNewConstMetric(signalDesc, prometheus.GaugeValue, hold, "hold_vs_baseline")
	}
}
