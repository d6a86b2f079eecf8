package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
)

// The database's round trip, timed at each scrape on the health connection
// (outside the pool): an empty query, which Postgres answers without work,
// so its time is the way there and back and nothing else. A pool held by
// round trips to a slow database and one held by queries look alike from
// the pool (full, long waits, holds spent in statements); the round trip
// against the mean hold tells them apart, with no view from Postgres and
// whatever the pool is doing (a pool that churns through connections a
// deadline closed still has this one). docs/metrics.md, "The database's
// round trip".

// A scrape waits at most roundTripWait for the connection (a readiness
// check may be on it), then gives the round trip roundTripTimeout of its
// own, within the lab's 2 s scrape timeout: a database that does not answer
// within it has no figure at that scrape.
const (
	roundTripWait    = 250 * time.Millisecond
	roundTripTimeout = time.Second
)

// roundTrip times one round trip on the kept connection, opening one first
// (not timed) when there is none. A connection whose round trip fails is
// closed; the next call opens another, unless the store closed.
func (h *healthConn) roundTrip() (time.Duration, error) {
	wait, cancel := context.WithTimeout(context.Background(), roundTripWait)
	err := h.take(wait)
	cancel()
	if err != nil {
		return 0, err
	}
	defer h.give()
	if h.closed {
		return 0, errHealthClosed
	}
	ctx, cancel := context.WithTimeout(context.Background(), roundTripTimeout)
	defer cancel()
	if h.conn == nil {
		c, err := pgx.ConnectConfig(ctx, h.cfg)
		if err != nil {
			return 0, err
		}
		h.conn = c
	}
	start := time.Now()
	if err := h.conn.Ping(ctx); err != nil {
		_ = h.conn.Close(context.WithoutCancel(ctx))
		h.conn = nil
		return 0, err
	}
	return time.Since(start), nil
}

// roundTripCollector exports the round trip timed at each scrape, in the
// manner of the blackbox exporter's probe: no ticker, never older than the
// scrape. It exports nothing when the database does not answer.
type roundTripCollector struct {
	health *healthConn
	desc   *prometheus.Desc
}

var _ prometheus.Collector = (*roundTripCollector)(nil)

func newRoundTripCollector(h *healthConn) *roundTripCollector {
	return &roundTripCollector{health: h, desc: prometheus.NewDesc("orderlab_db_round_trip_seconds",
		"One round trip to the database (an empty query) on a connection outside the pool, timed at this scrape; absent when the database does not answer within 1 s.",
		nil, nil)}
}

// Describe implements prometheus.Collector.
func (c *roundTripCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect implements prometheus.Collector.
func (c *roundTripCollector) Collect(ch chan<- prometheus.Metric) {
	if d, err := c.health.roundTrip(); err == nil {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, d.Seconds())
	}
}
