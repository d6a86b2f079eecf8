package api

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/contrib/instrumentation/github.com/gin-gonic/gin/otelgin"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/orderlab/orderlab/services/internal/model"
	"github.com/orderlab/orderlab/services/internal/overload"
	"github.com/orderlab/orderlab/services/internal/telemetry"
)

// BenchmarkRefusal is the server's own cost of one 429 from a full model,
// where the admission could be made: the edge (a plain handler in front of
// gin, as the services run), a net/http.ServeMux with Go 1.22 patterns in
// front of gin, gin middleware first in gin's chain (before otelgin), and
// gin middleware after otelgin (where the wait could be a span under the
// request's). Every request is refused; the trace provider samples
// everything, as the services' does. Run it on a quiet machine: it
// compares microseconds.
func BenchmarkRefusal(b *testing.B) {
	m := &edgeModel{}
	m.full.Store(true)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	tp := sdktrace.NewTracerProvider()
	knobs := NewKnobs(Config{Service: "bench", RequestTimeout: 5 * time.Second})

	edge, err := NewServer(knobs, m, pinger{}, func() bool { return true }, log, prometheus.NewRegistry(), tp)
	if err != nil {
		b.Fatal(err)
	}

	// The same chain, with the admission made by a ServeMux in front.
	met, err := newMetrics(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	engine := func(first, afterSpan []gin.HandlerFunc) *gin.Engine {
		r := gin.New()
		r.Use(recovery(log))
		r.Use(first...)
		r.Use(otelgin.Middleware("bench", otelgin.WithTracerProvider(tp), otelgin.WithPropagators(telemetry.Propagator)))
		r.Use(afterSpan...)
		r.Use(met.instrument, timeout(knobs), requestBuffer(knobs))
		addRoutes(r, knobs, pinger{}, func() bool { return true }, log, met)
		return r
	}
	refused := met.duration.WithLabelValues("POST", "/orders", "429")
	refuse := func(w http.ResponseWriter, r *http.Request, op model.Op) bool {
		start := time.Now()
		met.inFlight.Inc()
		defer met.inFlight.Dec()
		if _, err := m.Admit(r.Context(), op); err != nil {
			writeRejection(w, err.(*overload.RejectedError))
			refused.Observe(time.Since(start).Seconds())
			return true
		}
		return false
	}
	mux := http.NewServeMux()
	g := engine(nil, nil)
	mux.Handle("/", g)
	mux.HandleFunc("POST /orders", func(w http.ResponseWriter, r *http.Request) {
		if !refuse(w, r, model.PlaceOrder) {
			g.ServeHTTP(w, r)
		}
	})

	// The admission as gin middleware, first after recovery; or after
	// otelgin, so that the wait could be a span under the request's.
	mwf := func(c *gin.Context) {
		if c.Request.Method == http.MethodPost && c.FullPath() == "/orders" && refuse(c.Writer, c.Request, model.PlaceOrder) {
			c.Abort()
		}
	}
	mw := engine([]gin.HandlerFunc{mwf}, nil)
	traced := engine(nil, []gin.HandlerFunc{mwf})

	for _, v := range []struct {
		name string
		h    http.Handler
	}{{"edge", edge}, {"servemux", mux}, {"gin-middleware", mw}, {"gin-middleware-after-otelgin", traced}} {
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/orders", strings.NewReader(`{"customer_id":"c","items":[]}`))
				req.Header.Set("Content-Type", "application/json")
				w := httptest.NewRecorder()
				v.h.ServeHTTP(w, req)
				if w.Code != http.StatusTooManyRequests {
					b.Fatalf("%s: %d, want 429", v.name, w.Code)
				}
			}
		})
	}
}
