package httpserver

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/orderlab/orderlab/services/internal/telemetry"
)

// metrics are the servers' gauges, read at scrape time from counters the
// servers keep anyway, and nbio's handler-pool wait.
type metrics struct {
	open   atomic.Int64 // API connections open
	active atomic.Int64 // of them, with a request being read, queued or handled

	// nbio's handler pool.
	poolSize   int
	poolBusy   atomic.Int64 // requests whose handler runs now
	poolQueued atomic.Int64 // requests read and waiting for a pool goroutine
	poolWait   prometheus.Histogram
}

// connection counts a connection's change of state: +1 when it opens or
// turns active, -1 when it closes or turns idle.
func (m *metrics) connection(open, active int64) {
	if open != 0 {
		m.open.Add(open)
	}
	if active != 0 {
		m.active.Add(active)
	}
}

// connections returns the open connections and, of them, the active ones.
// The open count is exact; the active count may run ahead of a
// connection's turn to idle by a moment (two goroutines see the turn), so
// it is kept within the open count, and the states always add up to it.
func (m *metrics) connections() (open, active int64) {
	open = max(0, m.open.Load())
	return open, min(max(0, m.active.Load()), open)
}

func newMetrics(reg prometheus.Registerer, kind Kind) (*metrics, error) {
	m := &metrics{}
	byState := func(state string, v func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name:        "orderlab_http_connections",
			Help:        "API connections open, by state: active (a request being read, queued or handled) or idle (kept alive between requests, or new).",
			ConstLabels: prometheus.Labels{"state": state},
		}, v)
	}
	cs := []prometheus.Collector{
		byState("active", func() float64 { _, active := m.connections(); return float64(active) }),
		byState("idle", func() float64 { open, active := m.connections(); return float64(open - active) }),
	}
	if kind == NBIO {
		m.poolWait = prometheus.NewHistogram(telemetry.DurationHistogram("orderlab_http_handler_pool_wait_seconds",
			"nbio: time from a request read in full to its handler starting on a pool goroutine (outside the request's deadline and its latency histogram).",
			[]float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}))
		cs = append(cs,
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "orderlab_http_handler_pool_size",
				Help: "nbio: the most handler goroutines (requests handled at once).",
			}, func() float64 { return float64(m.poolSize) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "orderlab_http_handler_pool_busy",
				Help: "nbio: handler goroutines running a request now.",
			}, func() float64 { return float64(m.poolBusy.Load()) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "orderlab_http_handler_pool_queued",
				Help: "nbio: requests read in full and waiting for a handler goroutine.",
			}, func() float64 { return float64(m.poolQueued.Load()) }),
			m.poolWait,
		)
	}
	return m, telemetry.Register(reg, cs...)
}
