package scrape

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/orderlab/orderlab/internal/poll"
)

// A real client_golang Go collector with the scheduler's runtime metrics
// switched on, as the services register it: scraped while goroutines spin
// past GOMAXPROCS and others sit parked on a channel, the series say so,
// runnable and waiting, and the run's scheduling latency has waits in it.
func TestSchedulerFromAGoCollector(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(collectors.GoRuntimeMetricsRule{
		Matcher: regexp.MustCompile(`^/sched/(latencies:seconds|goroutines/(runnable|running|waiting|not-in-go):goroutines)$`),
	})))
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()

	// No deadline on the scrape but the test's: with sixteen spinners on a
	// machine at a load average of 40, the default client's 2 s ran out,
	// and the summary held only the scrape taken before the goroutines.
	w := Watch(context.Background(), Scraper{URL: srv.URL, Client: &http.Client{}}, time.Hour) // scrapes driven below
	spinners, parked := 8*runtime.GOMAXPROCS(0), 200
	release := make(chan struct{})
	var wg sync.WaitGroup
	for range parked {
		wg.Go(func() { <-release })
	}
	poll.Until(t, 10*time.Second, "the parked goroutines to wait", func() error {
		m := []metrics.Sample{{Name: "/sched/goroutines/waiting:goroutines"}}
		metrics.Read(m)
		if n := m[0].Value.Uint64(); n < uint64(parked) {
			return fmt.Errorf("%d waiting", n)
		}
		return nil
	})
	// Spinners never block: from their start to their stop each is
	// running or runnable, waiting for a thread.
	var stop atomic.Bool
	for range spinners {
		wg.Go(func() {
			for !stop.Load() {
			}
		})
	}
	w.scrape(context.Background())
	stop.Store(true)
	close(release)
	wg.Wait()
	series := w.Stop(context.Background())
	if series.Errors > 0 {
		t.Fatalf("%d scrapes failed: %s", series.Errors, series.LastError)
	}
	sum := series.Summary()

	sc := sum.Scheduler
	if !sc.Exported() || sc.PeakRunnable < float64(spinners/2) || sc.PeakWaiting < float64(parked) || sc.PeakRunning < 1 {
		t.Errorf("scheduler %+v: want %d runnable or about, %d waiting or more, one running or more", sc, spinners-runtime.GOMAXPROCS(0), parked)
	}
	if sc.Latencies <= 0 || sc.LatencyP99 <= 0 || sc.MeanRunnable <= 0 {
		t.Errorf("scheduler %+v: want waits for a thread in the run's latency and a mean runnable above 0", sc)
	}
}

// The p99 past the last finite bound is that bound, marked beyond; one
// inside the buckets is interpolated and not marked; no series, nothing.
func TestSchedulerLatencyBeyondItsBuckets(t *testing.T) {
	var s Scheduler
	s.SetLatency([]Bucket{{0.01, 50}, {0.117, 90}, {math.Inf(1), 100}})
	if !s.LatencyBeyond || s.LatencyP99 != 0.117 || s.Latencies != 100 {
		t.Errorf("%+v: want 117 ms, beyond the buckets, of 100 waits", s)
	}
	s.SetLatency([]Bucket{{0.01, 50}, {0.117, 100}, {math.Inf(1), 100}})
	if s.LatencyBeyond || s.LatencyP99 <= 0.01 || s.LatencyP99 >= 0.117 {
		t.Errorf("%+v: want a p99 inside (10 ms, 117 ms), not beyond", s)
	}
	if none := (Series{Samples: []Sample{{}, {}}}).Summary().Scheduler; none.Exported() || none.LatencyBeyond {
		t.Errorf("no scheduler series: %+v, want nothing exported", none)
	}
}
