package background

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/orderlab/orderlab/loadtest/attack"
)

// Outcomes, the outcome label of orderlab_background_requests_total.
const (
	outcomeOK       = "ok"       // an answer 1xx-3xx
	outcomeRejected = "rejected" // 429 or 503: shed by the service
	outcomeError    = "error"    // any other answer, or none
)

// metrics is what the background load says about itself on /metrics.
type metrics struct {
	requests *prometheus.CounterVec
}

// newMetrics registers the background's metrics with reg; a nil reg counts
// into a registry nobody reads.
func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		// job, not service: Prometheus scrapes the background with
		// honor_labels, so each series lands under the job of the service
		// it loaded and the board's $service selects it like the service's
		// own series (prometheus/prometheus.yml).
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "orderlab_background_requests_total",
			Help: "Requests the lab's background load sent, by the service loaded (job), route template and outcome (ok, rejected: 429 or 503, error).",
		}, []string{"job", "route", "outcome"}),
	}
	if reg != nil {
		reg.MustRegister(m.requests)
	}
	return m
}

// target exports every route and outcome of target from the start, so that
// rates are 0, not missing, until something happens.
func (m *metrics) target(target string, mix []Endpoint) {
	for _, e := range mix {
		for _, o := range []string{outcomeOK, outcomeRejected, outcomeError} {
			m.requests.WithLabelValues(target, e.Route, o)
		}
	}
}

// count records one request's outcome.
func (m *metrics) count(target string, e Endpoint, resp attack.Response, err error) {
	m.requests.WithLabelValues(target, e.Route, outcome(resp, err)).Inc()
}

// outcome classifies an answer (or its absence) the way loadtest's reports
// do.
func outcome(resp attack.Response, err error) string {
	switch {
	case err != nil:
		return outcomeError
	case attack.IsRejection(resp.Status):
		return outcomeRejected
	case resp.Status >= 400:
		return outcomeError
	}
	return outcomeOK
}
