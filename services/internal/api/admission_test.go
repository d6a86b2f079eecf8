package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/orderlab/orderlab/internal/poll"
	"github.com/orderlab/orderlab/services/internal/model"
	"github.com/orderlab/orderlab/services/internal/order"
	"github.com/orderlab/orderlab/services/internal/overload"
)

// fakeModel is a model.Model whose Admit refuses while full is set and
// otherwise admits a fakeAdmitted that does what hold says.
type fakeModel struct {
	full   atomic.Bool
	admits atomic.Int64
	hold   func(ctx context.Context) error
	last   atomic.Pointer[fakeAdmitted]
}

func (m *fakeModel) Admit(ctx context.Context, op model.Op) (model.Admitted, error) {
	m.admits.Add(1)
	if m.full.Load() {
		return nil, &overload.RejectedError{Resource: "semaphore", RetryAfter: 3 * time.Second}
	}
	a := &fakeAdmitted{m: m, start: time.Now(), released: make(chan struct{})}
	m.last.Store(a)
	return a, nil
}

func (m *fakeModel) Close(context.Context) error { return nil }

type fakeAdmitted struct {
	m        *fakeModel
	start    time.Time         // of its wait
	called   trace.SpanContext // the span of the context HoldConnection got
	deadline bool              // that context had a deadline
	releases atomic.Int64
	released chan struct{}
}

func (a *fakeAdmitted) PlaceOrder(context.Context, order.Input, string, time.Duration, time.Duration) (order.Result, error) {
	return order.Result{}, nil
}
func (a *fakeAdmitted) GetOrder(context.Context, int64) (order.Order, error) {
	return order.Order{}, nil
}
func (a *fakeAdmitted) HoldConnection(ctx context.Context, _ time.Duration, _ int) error {
	a.called = trace.SpanContextFromContext(ctx)
	_, a.deadline = ctx.Deadline()
	return a.m.hold(ctx)
}
func (a *fakeAdmitted) Wait() model.Wait {
	return model.Wait{Span: "fake.wait", Start: a.start, Waited: time.Millisecond}
}
func (a *fakeAdmitted) Release(bool) {
	if a.releases.Add(1) == 1 {
		close(a.released)
	}
}

type pinger struct{}

func (pinger) Ping(context.Context) error { return nil }

// testServer serves NewServer's handler for m on a loopback server, with
// its spans in the returned recorder and its metrics in reg.
func testServer(t *testing.T, m *fakeModel) (*httptest.Server, *tracetest.SpanRecorder, *prometheus.Registry) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	reg := prometheus.NewRegistry()
	h, err := NewServer(NewLiveConfig(Config{Service: "test", RequestTimeout: 5 * time.Second}), m, pinger{}, func() bool { return true },
		slog.New(slog.NewTextHandler(io.Discard, nil)), reg, tp)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts, rec, reg
}

// requests is the count of orderlab_http_request_duration_seconds for
// one method, route and code.
func requests(t *testing.T, reg *prometheus.Registry, method, route, code string) uint64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"method": method, "route": route, "code": code}
	for _, f := range fams {
		if f.GetName() != "orderlab_http_request_duration_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			if labelsAre(m, want) {
				return m.GetHistogram().GetSampleCount()
			}
		}
	}
	return 0
}

func labelsAre(m *dto.Metric, want map[string]string) bool {
	n := 0
	for _, l := range m.GetLabel() {
		if want[l.GetName()] != l.GetValue() {
			return false
		}
		n++
	}
	return n == len(want)
}

// A refused order is answered by the admission: the 429 with its
// Retry-After and problem body, counted on the request series, and no span
// (the observer never ran).
func TestRefusalIsAnsweredBeforeAnySpan(t *testing.T) {
	m := &fakeModel{}
	m.full.Store(true)
	ts, rec, reg := testServer(t, m)
	resp, err := http.Post(ts.URL+"/orders", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	var p Problem
	err = json.NewDecoder(resp.Body).Decode(&p)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "3" ||
		resp.Header.Get("Content-Type") != "application/problem+json" || p.Type != ProblemBase+"overloaded" {
		t.Errorf("refused order: %d Retry-After %q %q, body %+v (%v)", resp.StatusCode,
			resp.Header.Get("Retry-After"), resp.Header.Get("Content-Type"), p, err)
	}
	if n := len(rec.Started()); n != 0 {
		t.Errorf("a refused request started %d spans, want none", n)
	}
	if n := requests(t, reg, "POST", "/orders", "429"); n != 1 {
		t.Errorf("POST /orders 429 counted %d times, want 1", n)
	}
	if n := m.admits.Load(); n != 1 {
		t.Errorf("Admit called %d times, want once", n)
	}
	// A read by id is admitted there too.
	resp, err = http.Get(ts.URL + "/orders/7")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 429 || requests(t, reg, "GET", "/orders/:id", "429") != 1 || len(rec.Started()) != 0 {
		t.Errorf("refused read: %d, counted %d times, %d spans; want 429, once, none",
			resp.StatusCode, requests(t, reg, "GET", "/orders/:id", "429"), len(rec.Started()))
	}
}

// An admitted request's handler gets its model.Admitted and calls it under
// the request's span and deadline; the wait is a span under the request's,
// and the Admitted is released once, on every path: an answer, a panic, a
// client that hangs up.
func TestAdmittedIsReleasedOnEveryPath(t *testing.T) {
	for _, tc := range []struct {
		name   string
		hold   func(ctx context.Context) error
		cancel bool
		status int
	}{
		{"answered", func(context.Context) error { return nil }, false, 200},
		{"panicked", func(context.Context) error { panic("boom") }, false, 500},
		{"client gone", func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &fakeModel{hold: tc.hold}
			ts, rec, reg := testServer(t, m)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/work/db?delay=1ms", nil)
			done := make(chan *http.Response, 1)
			go func() {
				resp, _ := http.DefaultClient.Do(req)
				done <- resp
			}()
			if tc.cancel {
				poll.Until(t, 10*time.Second, "the request admitted", func() error {
					if m.last.Load() != nil { // admitted once Admit returned
						return nil
					}
					select {
					case <-done:
						t.Fatal("the request ended before it was admitted")
					default:
					}
					return errors.New("not admitted yet")
				})
				cancel()
			}
			resp := poll.Recv(t, 10*time.Second, "the answer", done)
			if resp != nil {
				resp.Body.Close()
				if resp.StatusCode != tc.status {
					t.Errorf("status %d, want %d", resp.StatusCode, tc.status)
				}
			}
			a := m.last.Load()
			poll.Recv(t, 10*time.Second, "the admission released", a.released)
			if n := m.admits.Load(); n != 1 {
				t.Errorf("Admit called %d times, want once", n)
			}
			if n := a.releases.Load(); n < 1 {
				t.Errorf("released %d times", n)
			}
			if !a.called.IsValid() || !a.deadline {
				t.Errorf("HoldConnection got span %v, deadline %v: want the request's span and deadline", a.called, a.deadline)
			}
			if tc.cancel {
				return
			}
			var server, wait sdktrace.ReadOnlySpan
			for _, s := range rec.Ended() {
				switch s.Name() {
				case "GET /work/db":
					server = s
				case "fake.wait":
					wait = s
				}
			}
			if server == nil || server.SpanContext().SpanID() != a.called.SpanID() || server.SpanKind() != trace.SpanKindServer {
				t.Fatalf("spans %v: want the server span GET /work/db, the one HoldConnection got", rec.Ended())
			}
			if wait == nil || wait.Parent().SpanID() != server.SpanContext().SpanID() ||
				!wait.StartTime().Equal(a.start) || wait.EndTime().Sub(wait.StartTime()) != time.Millisecond {
				t.Errorf("wait span %v: want fake.wait under the server span, from the wait's start for its 1ms", wait)
			}
			if server.StartTime().After(a.start) {
				t.Errorf("the server span starts at %v, after the admission's wait began (%v): it should count from the arrival", server.StartTime(), a.start)
			}
			if tc.status == 500 {
				return // the observer records a panic as it unwinds, before recovery wrote the 500
			}
			if n := requests(t, reg, "GET", "/work/db", resp.Status[:3]); n != 1 {
				t.Errorf("GET /work/db %s counted %d times, want 1", resp.Status[:3], n)
			}
		})
	}
}
