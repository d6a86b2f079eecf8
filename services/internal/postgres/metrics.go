package postgres

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/orderlab/orderlab/services/internal/dberr"
)

// metrics count what went wrong with the database and what was done about it.
type metrics struct {
	errors  *prometheus.CounterVec
	retries *prometheus.CounterVec
}

func newMetrics() *metrics {
	m := &metrics{
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "orderlab_db_errors_total",
			Help: "Failed database calls (each attempt), by class: unavailable, connection_lost (nothing committed), outcome_unknown (the connection broke after sending), deadline, conflict, refused (the server refused the transaction: a deadlock, a statement error), other (a bug).",
		}, []string{"class"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "orderlab_db_retries_total",
			Help: "Database calls sent a second time, by reason: connection_lost (nothing was committed), outcome_unknown (keyed orders through the replay path, and reads).",
		}, []string{"reason"}),
	}
	for _, c := range dberr.Counted { // every series exists from the start
		m.errors.WithLabelValues(c.String())
	}
	for _, c := range []dberr.Class{dberr.ConnectionLost, dberr.OutcomeUnknown} {
		m.retries.WithLabelValues(c.String())
	}
	return m
}
