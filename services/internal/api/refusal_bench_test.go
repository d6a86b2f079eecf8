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
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/orderlab/orderlab/services/internal/model"
	"github.com/orderlab/orderlab/services/internal/overload"
)

// BenchmarkRefusal is the server's own cost of one 429 from a full model,
// where the admission could be made: first in the route's gin chain,
// before any middleware (admission.go, as the services run); a plain
// handler in front of gin; and in gin after the observer, where the
// request's span exists already. Every request is refused; the trace
// provider samples everything, as the services' does. Run it on a quiet
// machine: it compares microseconds.
func BenchmarkRefusal(b *testing.B) {
	m := &fakeModel{}
	m.full.Store(true)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	tp := sdktrace.NewTracerProvider()
	live := NewLiveConfig(Config{Service: "bench", RequestTimeout: 5 * time.Second})

	services, err := NewServer(live, m, pinger{}, func() bool { return true }, log, prometheus.NewRegistry(), tp)
	if err != nil {
		b.Fatal(err)
	}
	met, err := newMetrics(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	refused := met.duration.WithLabelValues("POST", "/orders", "429")
	refuse := func(w http.ResponseWriter, r *http.Request) bool {
		start := time.Now()
		met.inFlight.Inc()
		defer met.inFlight.Dec()
		if _, err := m.Admit(r.Context(), model.PlaceOrder); err != nil {
			writeRejection(w, err.(*overload.RejectedError))
			refused.Observe(time.Since(start).Seconds())
			return true
		}
		return false
	}
	// A handler in front of gin.
	below := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/orders" || !refuse(w, r) {
			services.ServeHTTP(w, r)
		}
	})
	// In gin, after the observer has started the span.
	observed := gin.New()
	observed.Use(recovery(log), newObserver(live, met, tp).observed)
	observed.POST("/orders", func(c *gin.Context) { refuse(c.Writer, c.Request) })

	for _, v := range []struct {
		name string
		h    http.Handler
	}{{"first-in-gin", services}, {"below-gin", below}, {"after-the-span", observed}} {
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
