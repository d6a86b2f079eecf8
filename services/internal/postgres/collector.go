package postgres

import (
	"github.com/prometheus/client_golang/prometheus"
)

// statsCollector reads pgxpool.Stat at scrape time, in the manner of
// client_golang's collectors.NewDBStatsCollector, so the figures are never
// older than the scrape and no ticker goroutine is needed. It reads every
// open pool: after a resize (SetPoolSize) the connections of the pool being
// replaced still count until it has closed, the size limit is the new
// pool's, and the counters add up every pool since the start, so they never
// go back nor count anything twice (pools.stats).
type statsCollector struct {
	pools *pools

	acquired, idle, constructing, total, max                *prometheus.Desc
	acquires, emptyAcquires, canceled, acquireSec, emptySec *prometheus.Desc
}

var _ prometheus.Collector = (*statsCollector)(nil)

func newStatsCollector(ps *pools) *statsCollector {
	d := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc("orderlab_db_pool_"+name, help, nil, nil)
	}
	return &statsCollector{
		pools:         ps,
		acquired:      d("acquired_connections", "Connections checked out of the pool now."),
		idle:          d("idle_connections", "Idle connections in the pool."),
		constructing:  d("constructing_connections", "Connections being opened."),
		total:         d("total_connections", "Connections in the pool: acquired, idle and constructing."),
		max:           d("max_connections", "The pool's size limit (DB_MAX_CONNS)."),
		acquires:      d("acquires_total", "Successful acquires from the pool."),
		emptyAcquires: d("empty_acquires_total", "Successful acquires that had to wait because no connection was idle."),
		canceled:      d("canceled_acquires_total", "Acquires canceled by their context while waiting."),
		acquireSec:    d("acquire_duration_seconds_total", "Total time spent in successful acquires."),
		emptySec:      d("empty_acquire_wait_seconds_total", "Total time waited by acquires that found the pool empty."),
	}
}

// Describe implements prometheus.Collector.
func (c *statsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.acquired, c.idle, c.constructing, c.total, c.max,
		c.acquires, c.emptyAcquires, c.canceled, c.acquireSec, c.emptySec} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *statsCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.pools.stats()
	gauge := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v)
	}
	counter := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v)
	}
	gauge(c.acquired, float64(s.acquired))
	gauge(c.idle, float64(s.idle))
	gauge(c.constructing, float64(s.constructing))
	gauge(c.total, float64(s.total))
	gauge(c.max, float64(s.max))
	counter(c.acquires, float64(s.counters.acquires))
	counter(c.emptyAcquires, float64(s.counters.emptyAcquires))
	counter(c.canceled, float64(s.counters.canceled))
	counter(c.acquireSec, s.counters.acquireDur.Seconds())
	counter(c.emptySec, s.counters.emptyWait.Seconds())
}
