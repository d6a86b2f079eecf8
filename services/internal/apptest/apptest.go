// Package apptest runs a real service (app.Run with its own environment)
// against a fresh Postgres database on loopback ports, for the services'
// tests (this file), and holds the suites that all three must pass: the
// API (suite.go, with its bad-input table in badinput.go and the metric
// families in families.go), the database failing (faults.go, faultload.go:
// internal/dbfault's catalog), abuse, pitfalls, shutdown and traces. Waits
// go through internal/poll, metrics through internal/metrictest; holds.go
// keeps parts of a service busy until the test releases them; wire.go
// holds the answers' JSON as the suites read it, promtool.go finds promtool.
package apptest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/orderlab/orderlab/internal/ledger"
	"github.com/orderlab/orderlab/internal/metrictest"
	"github.com/orderlab/orderlab/internal/pgtest"
	"github.com/orderlab/orderlab/internal/poll"
	"github.com/orderlab/orderlab/internal/proc"
	"github.com/orderlab/orderlab/services/internal/app"
)

// Instance is a running service.
type Instance struct {
	URL      string        // API base URL
	AdminURL string        // admin base URL (/metrics)
	DB       *pgxpool.Pool // the service's database, for assertions
	Log      *syncBuffer   // everything the service logged

	t       testing.TB
	cancel  context.CancelFunc
	exited  chan struct{} // closed when Run has returned
	runErr  error         // Run's error, set before exited closes
	stopErr error
	once    sync.Once
}

// Start runs svc with env (over test defaults: a fresh database, free
// loopback ports, a small pool, warn-level logs) and waits until /readyz
// answers 200. The service is stopped when t ends.
func Start(t testing.TB, svc app.Service, env map[string]string) *Instance {
	t.Helper()
	return StartOn(t, pgtest.New(t), svc, env)
}

// StartOn is Start against the database dbURL, which Instance.DB also
// uses. env may set the service's DATABASE_URL to another way to the same
// database (a faultproxy in front of it).
func StartOn(t testing.TB, dbURL string, svc app.Service, env map[string]string) *Instance {
	t.Helper()
	addrs, err := proc.LoopbackAddrs(2)
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{
		"DATABASE_URL": dbURL,
		"HTTP_ADDR":    addrs[0],
		"ADMIN_ADDR":   addrs[1],
		"DB_MAX_CONNS": "4",
		"LOG_LEVEL":    "warn",
	}
	for k, v := range env {
		vars[k] = v
	}
	inst := &Instance{
		URL:      "http://" + vars["HTTP_ADDR"],
		AdminURL: "http://" + vars["ADMIN_ADDR"],
		Log:      &syncBuffer{},
		t:        t,
		exited:   make(chan struct{}),
	}
	ctx, cancel := context.WithCancel(context.Background())
	inst.cancel = cancel
	go func() {
		inst.runErr = app.Run(ctx, svc, func(k string) string { return vars[k] }, inst.Log, inst.Log)
		close(inst.exited)
	}()
	t.Cleanup(func() {
		if err := inst.Stop(); err != nil {
			t.Errorf("service stopped with error: %v\nlog:\n%s", err, inst.Log)
		}
	})
	inst.waitReady()

	pool, err := pgxpool.New(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	inst.DB = pool
	return inst
}

// Stop sends the shutdown signal and returns Run's error, once.
func (i *Instance) Stop() error {
	i.once.Do(func() {
		i.cancel()
		select {
		case <-i.exited:
			i.stopErr = i.runErr
		case <-time.After(60 * time.Second):
			i.stopErr = errors.New("service did not stop within 60s")
		}
	})
	return i.stopErr
}

func (i *Instance) waitReady() {
	i.t.Helper()
	err := proc.WaitReady(context.Background(), i.URL+"/readyz", 30*time.Second, i.exited)
	if err == nil {
		return
	}
	select {
	case <-i.exited:
		i.t.Fatalf("service exited during start: %v\nlog:\n%s", i.runErr, i.Log)
	default:
		i.t.Fatalf("service not ready: %v\nlog:\n%s", err, i.Log)
	}
}

// Response is an HTTP answer, read whole.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v, failing the test on error.
func (r Response) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %q: %v", r.Body, err)
	}
}

// Do sends a request to the API and reads the whole answer.
func (i *Instance) Do(method, path, contentType string, body []byte, header map[string]string) (Response, error) {
	req, err := http.NewRequest(method, i.URL+path, bytes.NewReader(body))
	if err != nil {
		return Response{}, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return i.Send(req)
}

// Send sends req (built against i.URL) and reads the whole answer.
func (i *Instance) Send(req *http.Request) (Response, error) {
	resp, err := client.Do(req)
	if err != nil {
		return Response{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: b}, err
}

// MustDo is Do that fails the test on a transport error.
func (i *Instance) MustDo(method, path, contentType string, body []byte, header map[string]string) Response {
	i.t.Helper()
	r, err := i.Do(method, path, contentType, body, header)
	if err != nil {
		i.t.Fatalf("%s %s: %v", method, path, err)
	}
	return r
}

// PostOrder posts body as JSON to path (/orders?...), with key as
// Idempotency-Key when not empty.
func (i *Instance) PostOrder(path, body, key string) (Response, error) {
	h := map[string]string{}
	if key != "" {
		h["Idempotency-Key"] = key
	}
	return i.Do(http.MethodPost, path, "application/json", []byte(body), h)
}

var client = &http.Client{
	Timeout:   60 * time.Second,
	Transport: &http.Transport{MaxIdleConnsPerHost: 256, MaxConnsPerHost: 0},
}

// Metrics scrapes /metrics (metrictest.Scrape).
func (i *Instance) Metrics() metrictest.Families {
	i.t.Helper()
	return metrictest.Scrape(i.t, i.AdminURL+"/metrics")
}

// AwaitMetric waits (at most 10 s, internal/poll) until the samples of
// the family name whose labels include match sum to want: a state the
// service reaches by itself (a permit held, a request queued).
func (i *Instance) AwaitMetric(name string, match map[string]string, want float64) {
	i.t.Helper()
	poll.Until(i.t, 10*time.Second, fmt.Sprintf("%s%v at %v", name, match, want), func() error {
		if got := i.Metrics().Value(name, match); got != want {
			return fmt.Errorf("%s%v = %v", name, match, got)
		}
		return nil
	})
}

// CountRows runs a count query on the service's database.
func (i *Instance) CountRows(query string, args ...any) int {
	i.t.Helper()
	var n int
	if err := i.DB.QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		i.t.Fatalf("%s: %v", query, err)
	}
	return n
}

// syncBuffer collects the service's log lines from several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// OrderBody is a valid order with n items (ledger.Body).
func OrderBody(customer string, n int) string { return ledger.Body(customer, n) }
