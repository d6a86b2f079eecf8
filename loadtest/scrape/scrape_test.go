package scrape

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// exposition renders a pipeline-like service whose counters have grown by
// step: each step adds 100 acquires of ~5 ms (outcome ok) and 1 slow
// canceled one, and 7 rejections.
func exposition(step int) string {
	ok := float64(100 * step)
	return fmt.Sprintf(`# TYPE go_goroutines gauge
go_goroutines %d
# TYPE go_threads gauge
go_threads %d
# TYPE process_resident_memory_bytes gauge
process_resident_memory_bytes %d
# TYPE orderlab_db_pool_acquired_connections gauge
orderlab_db_pool_acquired_connections %d
# TYPE orderlab_pipeline_queue_length gauge
orderlab_pipeline_queue_length{stage="intake"} %d
orderlab_pipeline_queue_length{stage="persist"} 2
# TYPE orderlab_pipeline_rejections_total counter
orderlab_pipeline_rejections_total %d
# TYPE orderlab_db_pool_acquire_wait_seconds histogram
orderlab_db_pool_acquire_wait_seconds_bucket{outcome="ok",le="0.001"} 0
orderlab_db_pool_acquire_wait_seconds_bucket{outcome="ok",le="0.01"} %g
orderlab_db_pool_acquire_wait_seconds_bucket{outcome="ok",le="1"} %g
orderlab_db_pool_acquire_wait_seconds_bucket{outcome="ok",le="+Inf"} %g
orderlab_db_pool_acquire_wait_seconds_sum{outcome="ok"} 1
orderlab_db_pool_acquire_wait_seconds_count{outcome="ok"} %g
orderlab_db_pool_acquire_wait_seconds_bucket{outcome="canceled",le="0.001"} 0
orderlab_db_pool_acquire_wait_seconds_bucket{outcome="canceled",le="0.01"} 0
orderlab_db_pool_acquire_wait_seconds_bucket{outcome="canceled",le="1"} 0
orderlab_db_pool_acquire_wait_seconds_bucket{outcome="canceled",le="+Inf"} %d
orderlab_db_pool_acquire_wait_seconds_sum{outcome="canceled"} 1
orderlab_db_pool_acquire_wait_seconds_count{outcome="canceled"} %d
`, 10+step*100, 8+step, (20+step)<<20, step*3, step*10, 7*step, ok, ok, ok, ok, step, step)
}

func TestSummaryReadsPeaksAndRunDeltas(t *testing.T) {
	var step atomic.Int64
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprint(w, exposition(int(step.Load())))
	}))
	defer s.Close()

	sc := Scraper{URL: s.URL + "/metrics"}
	step.Store(1)
	w := Watch(context.Background(), sc, time.Hour) // the interval never fires: scrapes are driven below
	step.Store(3)
	w.scrape(context.Background())
	step.Store(2) // a later, lower gauge must not lower the peak
	series := w.Stop(context.Background())

	if len(series.Samples) != 3 || series.Errors != 0 {
		t.Fatalf("%d samples, %d errors (%s)", len(series.Samples), series.Errors, series.LastError)
	}
	x := series.Samples[1]
	if x.Goroutines != 310 || x.Threads != 11 || x.RSSBytes != 23<<20 || x.PoolAcquired != 9 ||
		x.QueueLength["intake"] != 30 || x.QueueLength["persist"] != 2 || x.Rejections != 21 || x.AcquireWaits != 303 {
		t.Errorf("sample %+v", x)
	}
	sum := series.Summary()
	if sum.PeakGoroutines != 310 || sum.PeakThreads != 11 || sum.PeakRSSBytes != 23<<20 || sum.PeakQueueLength != 32 || sum.PeakPoolAcquired != 9 {
		t.Errorf("peaks %+v", sum)
	}
	// From step 1 to step 2: 100 ok acquires in (1ms, 10ms] and 1 canceled in +Inf.
	// p99 rank 99.99 falls at 99.99 % of the (1ms, 10ms] bucket.
	if sum.AcquireWaits != 101 || math.Abs(sum.AcquireWaitP99-(0.001+0.009*99.99/100)) > 1e-9 {
		t.Errorf("acquire waits %v, p99 %v", sum.AcquireWaits, sum.AcquireWaitP99)
	}
	if sum.Rejections != 7 {
		t.Errorf("rejections during the run %v, want 7", sum.Rejections)
	}
	if p := series.Samples[1].AcquireWaitP99; p <= 0.001 || p > 0.01 {
		t.Errorf("interval p99 %v, want inside (1ms, 10ms]", p)
	}
}

func TestAbsentSeriesReadAsZero(t *testing.T) {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "# TYPE go_goroutines gauge\ngo_goroutines 5\n")
	}))
	defer s.Close()
	x, err := Scraper{URL: s.URL}.Scrape(context.Background())
	if err != nil || x.Goroutines != 5 || x.Rejections != 0 || x.AcquireWait != nil || x.QueueLength != nil {
		t.Errorf("%+v, %v", x, err)
	}
}

func TestScrapeErrorsAreCountedNotFatal(t *testing.T) {
	s := httptest.NewServer(http.NotFoundHandler())
	defer s.Close()
	series := Watch(context.Background(), Scraper{URL: s.URL}, time.Hour).Stop(context.Background())
	if series.Errors != 2 || len(series.Samples) != 0 || series.LastError == "" {
		t.Errorf("%+v", series)
	}
	if sum := series.Summary(); sum.Scrapes != 0 || sum.Errors != 2 {
		t.Errorf("%+v", sum)
	}
}

func TestQuantileMatchesHistogramQuantile(t *testing.T) {
	b := []Bucket{{0.1, 10}, {0.2, 20}, {0.4, 20}, {math.Inf(1), 30}}
	for q, want := range map[float64]float64{0.25: 0.075, 0.5: 0.15, 0.6: 0.18, 0.9: 0.4, 0: 0} {
		if got := Quantile(q, b); math.Abs(got-want) > 1e-12 {
			t.Errorf("Quantile(%v) = %v, want %v", q, got, want)
		}
	}
	if Quantile(0.99, nil) != 0 {
		t.Error("empty histogram: want 0")
	}
}

func TestBucketJSONKeepsInfinity(t *testing.T) {
	in := []Bucket{{0.5, 1}, {math.Inf(1), 2}}
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out []Bucket
	if err := json.Unmarshal(data, &out); err != nil || len(out) != 2 || !math.IsInf(out[1].UpperBound, 1) || out[0] != in[0] {
		t.Errorf("%s → %v, %v", data, out, err)
	}
}
