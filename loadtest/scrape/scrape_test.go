package scrape

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// exposition renders a pipeline-like service whose counters have grown by
// step: each step adds 100 acquires of ~5 ms (outcome ok) and 1 slow
// canceled one, and 7 rejections. Its gauges follow level.
func exposition(step, level int) string {
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
`, 10+level*100, 8+level, (20+level)<<20, level*3, level*10, 7*step, ok, ok, ok, ok, step, step)
}

func TestSummaryReadsPeaksAndRunDeltas(t *testing.T) {
	var step, level atomic.Int64
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprint(w, exposition(int(step.Load()), int(level.Load())))
	}))
	defer s.Close()

	sc := Scraper{URL: s.URL + "/metrics"}
	step.Store(1)
	level.Store(1)
	w := Watch(context.Background(), sc, time.Hour) // the interval never fires: scrapes are driven below
	step.Store(2)
	level.Store(3)
	w.scrape(context.Background())
	step.Store(3)
	level.Store(2) // a later, lower gauge must not lower the peak
	series := w.Stop(context.Background())

	if len(series.Samples) != 3 || series.Errors != 0 {
		t.Fatalf("%d samples, %d errors (%s)", len(series.Samples), series.Errors, series.LastError)
	}
	x := series.Samples[1]
	if x.Goroutines != 310 || x.Threads != 11 || x.RSSBytes != 23<<20 || x.PoolAcquired != 9 ||
		x.QueueLength["intake"] != 30 || x.QueueLength["persist"] != 2 || x.Rejections != 14 || x.AcquireWaits != 202 {
		t.Errorf("sample %+v", x)
	}
	sum := series.Summary()
	if sum.PeakGoroutines != 310 || sum.PeakThreads != 11 || sum.PeakRSSBytes != 23<<20 || sum.PeakQueueLength != 32 || sum.PeakPoolAcquired != 9 {
		t.Errorf("peaks %+v", sum)
	}
	// From step 1 to step 3: 200 ok acquires in (1ms, 10ms] and 2 canceled in +Inf.
	// p99 rank 199.98 falls at 199.98/200 of the (1ms, 10ms] bucket.
	if sum.AcquireWaits != 202 || math.Abs(sum.AcquireWaitP99-(0.001+0.009*199.98/200)) > 1e-9 {
		t.Errorf("acquire waits %v, p99 %v", sum.AcquireWaits, sum.AcquireWaitP99)
	}
	if sum.Rejections != 14 {
		t.Errorf("rejections during the run %v, want 14", sum.Rejections)
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

// TestCounterResetsCountFromZero: the target restarts between two scrapes.
// As PromQL's increase() does, the interval with the reset counts the new
// values whole, and the intervals are summed.
func TestCounterResetsCountFromZero(t *testing.T) {
	inf := math.Inf(1)
	samples := []Sample{
		{Rejections: 7, AcquireWait: []Bucket{{0.01, 10}, {1, 10}, {inf, 10}}},
		{Rejections: 14, AcquireWait: []Bucket{{0.01, 20}, {1, 20}, {inf, 20}}}, // +10 fast
		{Rejections: 3, AcquireWait: []Bucket{{0.01, 2}, {1, 25}, {inf, 25}}},   // restart: 2 fast, 23 slow
		{Rejections: 5, AcquireWait: []Bucket{{0.01, 2}, {1, 28}, {inf, 28}}},   // +3 slow
	}
	sum := Series{Samples: samples}.Summary()
	if sum.Rejections != 7+3+2 || sum.AcquireWaits != 10+25+3 {
		t.Errorf("rejections %v, acquires %v; want 12 and 38", sum.Rejections, sum.AcquireWaits)
	}
	// 12 of 38 within 10 ms, so p99 lies in (10ms, 1s].
	if sum.AcquireWaitP99 <= 0.01 {
		t.Errorf("p99 %v, want above 10ms: the slow acquires after the restart are lost", sum.AcquireWaitP99)
	}
	// One interval over the restart: a bucket went down, so the delta is
	// the new snapshot whole, still cumulative.
	d := Delta(samples[1].AcquireWait, samples[2].AcquireWait)
	for i, want := range []float64{2, 25, 25} {
		if d[i].Count != want {
			t.Errorf("Delta across the restart = %v, want the new counts 2, 25, 25", d)
			break
		}
	}
}

// TestStopDoesNotCountTheScrapeItInterrupted: a scrape in flight when Stop
// cancels it is no failure of the target.
func TestStopDoesNotCountTheScrapeItInterrupted(t *testing.T) {
	var n atomic.Int64
	inFlight := make(chan struct{})
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 2 { // the first scrape of the ticker hangs until canceled
			close(inFlight)
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
			return
		}
		fmt.Fprint(w, "# TYPE go_goroutines gauge\ngo_goroutines 5\n")
	}))
	defer s.Close()
	w := Watch(context.Background(), Scraper{URL: s.URL}, time.Millisecond)
	<-inFlight
	series := w.Stop(context.Background())
	if series.Errors != 0 || len(series.Samples) != 2 {
		t.Errorf("%d samples, %d errors (%s); want the first and the last, no error", len(series.Samples), series.Errors, series.LastError)
	}
}

// replica is the exposition of one replica after n transactions that held
// their connection hold seconds each, with errs unavailable errors.
func replica(n int, hold float64, errs int) string {
	return fmt.Sprintf(`# TYPE orderlab_db_pool_max_connections gauge
orderlab_db_pool_max_connections 5
# TYPE orderlab_db_pool_connection_hold_seconds histogram
orderlab_db_pool_connection_hold_seconds_bucket{le="+Inf"} %d
orderlab_db_pool_connection_hold_seconds_sum %g
orderlab_db_pool_connection_hold_seconds_count %d
# TYPE orderlab_db_errors_total counter
orderlab_db_errors_total{class="unavailable"} %d
orderlab_db_errors_total{class="conflict"} 0
`, n, float64(n)*hold, n, errs)
}

// The replicas of a target (Scraper.Also) read as one: their pools, holds
// and errors summed, so that the run's mean hold weighs every replica's
// transactions and pool/hold is the fleet's bound.
func TestReplicasAreSummed(t *testing.T) {
	var step atomic.Int64
	srv := func(hold float64, errs int) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			n := int(step.Load())
			fmt.Fprint(w, replica(100*n, hold, errs*n))
		}))
	}
	a, b := srv(0.010, 0), srv(0.030, 3)
	defer a.Close()
	defer b.Close()
	s := Scraper{URL: a.URL, Also: []string{b.URL}}
	var series Series
	for range 3 {
		x, err := s.Scrape(context.Background())
		series.add(x, err)
		step.Add(1)
	}
	sum := series.Summary()
	if sum.PoolMax != 10 || math.Abs(sum.MeanHoldSeconds-0.020) > 1e-9 {
		t.Errorf("pool %v, mean hold %v; want 10 (5 + 5) and 20 ms (as many 10 ms holds as 30 ms ones)", sum.PoolMax, sum.MeanHoldSeconds)
	}
	if sum.DBErrors["unavailable"] != 6 || len(sum.DBErrors) != 1 {
		t.Errorf("db errors %v; want 6 unavailable over the run and no class that did not grow", sum.DBErrors)
	}
}

// TestPoolWaitIsAtMostTheDeadline: every acquire ends at the service's
// REQUEST_TIMEOUT, but interpolating inside the bucket that holds it puts
// the p99 above it (2.485 s against 2 s). Each sample's p99 and the run's
// are capped at the deadline the samples show, and the run's says it was;
// a target that shows no deadline is read as the buckets say.
func TestPoolWaitIsAtMostTheDeadline(t *testing.T) {
	inf := math.Inf(1)
	waits := func(n float64) []Bucket { return []Bucket{{1, 0}, {2.5, n}, {inf, n}} }
	deadline := map[string]float64{"REQUEST_TIMEOUT": 2}
	var s Series
	for i, n := range []float64{0, 100, 200} {
		s.add(Sample{Time: time.Unix(int64(i), 0), AcquireWait: waits(n), Knobs: deadline}, nil)
	}
	for i, x := range s.Samples[1:] {
		if x.AcquireWaitP99 != 2 {
			t.Errorf("sample %d: p99 %v, want the 2 s deadline", i+1, x.AcquireWaitP99)
		}
	}
	if sum := s.Summary(); sum.AcquireWaitP99 != 2 || !sum.AcquireWaitP99Capped {
		t.Errorf("run: p99 %v, capped %v; want 2 s, capped", sum.AcquireWaitP99, sum.AcquireWaitP99Capped)
	}

	var bare Series
	for i, n := range []float64{0, 100} {
		bare.add(Sample{Time: time.Unix(int64(i), 0), AcquireWait: waits(n)}, nil)
	}
	if sum := bare.Summary(); math.Abs(sum.AcquireWaitP99-2.485) > 1e-9 || sum.AcquireWaitP99Capped ||
		math.Abs(bare.Samples[1].AcquireWaitP99-2.485) > 1e-9 {
		t.Errorf("no deadline shown: run p99 %v (capped %v), sample %v; want the buckets' 2.485 s", sum.AcquireWaitP99,
			sum.AcquireWaitP99Capped, bare.Samples[1].AcquireWaitP99)
	}
}

// TestPoolUseCountsOnlyTheHoldsThatSucceeded: by Little's law the pool's
// productive use is the ok holds a second times their mean hold over the
// pool's size. A pool kept just as busy by calls that run into their
// deadline (outcome error) is not in use by that count.
func TestPoolUseCountsOnlyTheHoldsThatSucceeded(t *testing.T) {
	exposition := func(ok, failed int) string {
		return fmt.Sprintf(`# TYPE orderlab_db_pool_max_connections gauge
orderlab_db_pool_max_connections 5
# TYPE orderlab_db_pool_connection_hold_seconds histogram
orderlab_db_pool_connection_hold_seconds_bucket{outcome="ok",le="+Inf"} %d
orderlab_db_pool_connection_hold_seconds_sum{outcome="ok"} %g
orderlab_db_pool_connection_hold_seconds_count{outcome="ok"} %d
orderlab_db_pool_connection_hold_seconds_bucket{outcome="error",le="+Inf"} %d
orderlab_db_pool_connection_hold_seconds_sum{outcome="error"} %g
orderlab_db_pool_connection_hold_seconds_count{outcome="error"} %d
# TYPE orderlab_db_pool_acquire_wait_seconds histogram
orderlab_db_pool_acquire_wait_seconds_bucket{outcome="ok",le="+Inf"} %d
orderlab_db_pool_acquire_wait_seconds_sum{outcome="ok"} 0
orderlab_db_pool_acquire_wait_seconds_count{outcome="ok"} %d
orderlab_db_pool_acquire_wait_seconds_bucket{outcome="canceled",le="+Inf"} %d
orderlab_db_pool_acquire_wait_seconds_sum{outcome="canceled"} 0
orderlab_db_pool_acquire_wait_seconds_count{outcome="canceled"} %d
`, ok, float64(ok)*0.060, ok, failed, float64(failed)*1.0, failed, ok+failed, ok+failed, failed/2, failed/2)
	}
	var s Series
	// 10 s: 800 holds of 60 ms that succeeded (80/s x 60 ms = 4.8 of 5
	// connections), beside 20 of 1 s that failed.
	for i, n := range []int{0, 800} {
		x, err := parse(strings.NewReader(exposition(n, n/40)), expfmt.NewFormat(expfmt.TypeTextPlain), time.Unix(int64(10*i), 0))
		if err != nil {
			t.Fatal(err)
		}
		s.add(x, nil)
	}
	sum := s.Summary()
	if math.Abs(sum.PoolUse-0.96) > 1e-9 || math.Abs(sum.MeanOKHoldSeconds-0.060) > 1e-9 || math.Abs(sum.OKHoldsPerSecond-80) > 1e-9 {
		t.Errorf("pool use %v, mean ok hold %v s, ok holds %v/s; want 0.96 (80/s x 60 ms / 5), 60 ms, 80/s",
			sum.PoolUse, sum.MeanOKHoldSeconds, sum.OKHoldsPerSecond)
	}
	if sum.StarvedAcquires != 10 || sum.AcquireWaits != 830 {
		t.Errorf("starved acquires %v of %v, want 10 (outcome canceled) of 830", sum.StarvedAcquires, sum.AcquireWaits)
	}
	if want := (800*0.060 + 20*1.0) / 820; math.Abs(sum.MeanHoldSeconds-want) > 1e-9 {
		t.Errorf("mean hold %v, want %v: every outcome", sum.MeanHoldSeconds, want)
	}
}
