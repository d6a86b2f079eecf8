package postgres

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/orderlab/orderlab/services/internal/dberr"
)

// metrics count what went wrong with the database and what was done about it.
type metrics struct {
	errors  *prometheus.CounterVec
	retries *prometheus.CounterVec
	// tooManyClients counts the unavailable errors that are the server
	// refusing a connection for want of room (SQLSTATE 53300): what tells
	// too many clients from a database that is down.
	tooManyClients prometheus.Counter
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
		tooManyClients: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "orderlab_db_too_many_clients_total",
			Help: "Database calls that got no connection because the server refused it with SQLSTATE 53300 (too_many_connections: max_connections or the role's CONNECTION LIMIT reached); each is also an orderlab_db_errors_total{class=\"unavailable\"}.",
		}),
	}
	for _, c := range dberr.Counted { // every series exists from the start
		m.errors.WithLabelValues(c.String())
	}
	for _, c := range []dberr.Class{dberr.ConnectionLost, dberr.OutcomeUnknown} {
		m.retries.WithLabelValues(c.String())
	}
	return m
}
