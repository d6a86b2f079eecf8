package api

import (
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/orderlab/orderlab/services/internal/telemetry"
)

type metrics struct {
	duration      *prometheus.HistogramVec
	inFlight      prometheus.Gauge
	ordersCreated prometheus.Counter
	retried       prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		duration: prometheus.NewHistogramVec(telemetry.DurationHistogram("orderlab_http_request_duration_seconds",
			"HTTP request latency by method, route template and status code.",
			[]float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60}),
			[]string{"method", "route", "code"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "orderlab_http_requests_in_flight",
			Help: "HTTP requests being served now.",
		}),
		ordersCreated: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "orderlab_orders_created_total",
			Help: "Orders committed for the first time (idempotent replays are not counted).",
		}),
		retried: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "orderlab_http_retried_requests_total",
			Help: "HTTP requests that said they are a client's re-send (header " + RetryAttemptHeader + " above 0), answered or refused.",
		}),
	}
	if err := telemetry.Register(reg, m.duration, m.inFlight, m.ordersCreated, m.retried); err != nil {
		return nil, err
	}
	return m, nil
}

// RetryAttemptHeader is the request header by which a client says that a
// request is its nth re-send of the same request (n from 1), as gRPC's
// grpc-previous-rpc-attempts does. loadtest sends it; a service cannot
// tell a re-send from a new request without it, and a retry storm from any
// other overload without that.
const RetryAttemptHeader = "X-Retry-Attempt"

// countRetried counts the requests that say they are a re-send, before
// anything can refuse them: a storm of re-sends is mostly refused.
func (m *metrics) countRetried(c *gin.Context) {
	if n, err := strconv.Atoi(c.GetHeader(RetryAttemptHeader)); err == nil && n > 0 {
		m.retried.Inc()
	}
	c.Next()
}

// methodLabel bounds the method label: net/http accepts any token as a
// method, and a label must not grow with what clients invent.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions:
		return m
	}
	return "OTHER"
}

// recovery turns a panic into a logged 500 problem instead of a dropped
// connection. gin.Recovery would log unstructured text.
func recovery(log *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				log.ErrorContext(c.Request.Context(), "panic", "value", v, "stack", string(debug.Stack()))
				writeProblem(c, panicked())
			}
		}()
		c.Next()
	}
}
