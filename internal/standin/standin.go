// Package standin is a stand-in for one of the three services, for the
// tests of the commands that load them (loadtest, lab): it answers the few
// routes they send and serves the metrics they read, with no database.
package standin

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// Service answers POST /orders with 201 and the order's id (or 429 with
// Retry-After for every tenth order when it rejects), GET
// /work/db?delay=1ms with 200, and anything else with 404; its Admin
// server's /metrics counts goroutines and rejections.
type Service struct {
	API, Admin *httptest.Server
	Orders     atomic.Int64 // POST /orders received
	Rejected   atomic.Int64 // of them answered 429
}

// New starts a Service, stopped when t ends; reject makes it answer every
// tenth order 429.
func New(t testing.TB, reject bool) *Service {
	t.Helper()
	s := &Service{}
	s.API = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/orders":
			if n := s.Orders.Add(1); reject && n%10 == 0 {
				s.Rejected.Add(1)
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
			w.WriteHeader(http.StatusCreated)
			fmt.Fprintf(w, `{"id":%d}`, s.Orders.Load())
		case r.URL.Path == "/work/db" && r.URL.Query().Get("delay") == "1ms":
			_, _ = w.Write([]byte(`{"ok":true}`))
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	s.Admin = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "# TYPE go_goroutines gauge\ngo_goroutines %d\n# TYPE go_threads gauge\ngo_threads 7\n"+
			"# TYPE orderlab_limiter_rejections_total counter\norderlab_limiter_rejections_total %d\n", 10+s.Orders.Load(), s.Rejected.Load())
	}))
	t.Cleanup(func() { s.API.Close(); s.Admin.Close() })
	return s
}
