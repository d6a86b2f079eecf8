package measure

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/orderlab/orderlab/loadtest/attack"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestBurstServerFiguresLeaveOutTheWarmUp runs a burst of 20 with a warm-up
// round of 20 against a server that rejects every request and counts its
// rejections and pool acquires in its metrics: the run's server-side
// figures must cover the 20 timed requests, not the 40 the server saw.
func TestBurstServerFiguresLeaveOutTheWarmUp(t *testing.T) {
	var served atomic.Int64
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		served.Add(1)
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer api.Close()
	admin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n := served.Load()
		fmt.Fprintf(w, "# TYPE orderlab_limiter_rejections_total counter\norderlab_limiter_rejections_total %d\n"+
			"# TYPE orderlab_db_pool_acquire_wait_seconds histogram\n"+
			"orderlab_db_pool_acquire_wait_seconds_bucket{le=\"0.001\"} %d\n"+
			"orderlab_db_pool_acquire_wait_seconds_bucket{le=\"+Inf\"} %d\n"+
			"orderlab_db_pool_acquire_wait_seconds_sum 0\norderlab_db_pool_acquire_wait_seconds_count %d\n", n, n, n, n)
	}))
	defer admin.Close()

	cfg := attack.Config{Mode: attack.ModeBurst, Concurrency: 20, Warmup: true, Timeout: 5 * time.Second,
		Target: attack.Target{URL: api.URL + "/work/api"}}
	run, err := Run(context.Background(), Target{Name: "t", MetricsURL: admin.URL + "/metrics"}, cfg, Options{ScrapeInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if served.Load() != 40 || run.Rejected != 20 {
		t.Fatalf("server saw %d requests, run rejected %d; want 40 and 20", served.Load(), run.Rejected)
	}
	if s := run.Server; s == nil || s.Rejections != 20 || s.AcquireWaits != 20 {
		t.Errorf("server figures %+v; want 20 rejections and 20 acquires (the warm-up left out)", s)
	}
}

// TestARunBeyondTheTargetsOpenFilesIsRefused: a target that may hold 200
// open files cannot take 500 connections; the run is refused before any
// request, naming the limit, the need and the fix.
func TestARunBeyondTheTargetsOpenFilesIsRefused(t *testing.T) {
	var served atomic.Int64
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { served.Add(1) }))
	defer api.Close()
	admin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "# TYPE process_max_fds gauge\nprocess_max_fds 200\n")
	}))
	defer admin.Close()
	target := Target{Name: "semaphore", MetricsURL: admin.URL + "/metrics"}
	cfg := attack.Config{Mode: attack.ModeBurst, Concurrency: 500, Timeout: 5 * time.Second,
		Target: attack.Target{URL: api.URL + "/work/api"}}
	_, err := Run(context.Background(), target, cfg, Options{ScrapeInterval: time.Hour})
	if err == nil {
		t.Fatal("a run of 500 connections against a target that may hold 200 open files went ahead")
	}
	for _, want := range []string{"semaphore may hold 200 open files", "opens 500 connections", "about 628", "ulimit -n"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if served.Load() != 0 {
		t.Errorf("the target saw %d requests; want none", served.Load())
	}
	cfg.Concurrency = 50 // 50 + 128 spare fit in 200
	if _, err := Run(context.Background(), target, cfg, Options{ScrapeInterval: time.Hour}); err != nil {
		t.Fatalf("a run of 50 connections against 200 open files: %v", err)
	}
}
