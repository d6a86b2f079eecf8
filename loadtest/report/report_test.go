package report

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orderlab/orderlab/loadtest/attack"
	"github.com/orderlab/orderlab/loadtest/scrape"
)

// sampleResult is an open run: 1000 successes of 1..1000 ms, 10 rejections
// of 2 ms, 3 resets.
func sampleResult() *attack.Result {
	res := attack.NewResult()
	res.Mode = attack.ModeOpen
	res.Started = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	res.Elapsed = 10 * time.Second
	for i := range 1000 {
		_ = res.Success.RecordValue(int64(i+1) * 1000)
		_ = res.SuccessUncorrected.RecordValue(int64(i+1) * 500)
		_ = res.SchedulerLag.RecordValue(10)
	}
	for range 10 {
		_ = res.Rejected.RecordValue(2000)
		_ = res.RejectedUncorrected.RecordValue(2000)
	}
	res.Status[201], res.Status[429], res.Errors["reset"] = 1000, 10, 3
	res.Sent, res.Late, res.Unsent = 1013, 4, 2
	return res
}

func sampleConfig() attack.Config {
	return attack.Config{Mode: attack.ModeOpen, Concurrency: 100, Duration: 10 * time.Second,
		Pacer: attack.RampPacer{From: 10, To: 100, Ramp: 2 * time.Second}, Target: attack.Target{Method: "POST", URL: "http://127.0.0.1:8083/orders"}}
}

func TestJSONRoundTripKeepsFiguresAndHistograms(t *testing.T) {
	res := sampleResult()
	series := &scrape.Series{URL: "http://127.0.0.1:9093/metrics", Samples: []scrape.Sample{
		{Time: res.Started, Goroutines: 10, Rejections: 1},
		{Time: res.Started.Add(time.Second), Goroutines: 50, Rejections: 11, QueueLength: map[string]float64{"intake": 4}},
	}}
	run, err := FromResult("pipeline", "http://127.0.0.1:8083/orders", sampleConfig(), res, series)
	if err != nil {
		t.Fatal(err)
	}
	if run.Succeeded != 1000 || run.Rejected != 10 || run.Errors != 3 || run.Late != 4 || run.Unsent != 2 {
		t.Errorf("counts %+v", run)
	}
	if got := run.Latency.Success.P99; got < 0.989 || got > 0.991 {
		t.Errorf("success p99 %v s, want 0.99", got)
	}
	if run.Server.PeakGoroutines != 50 || run.Server.Rejections != 10 || run.Settings.RampFrom != 10 || run.Settings.Rate != 100 {
		t.Errorf("server %+v settings %+v", run.Server.Summary, run.Settings)
	}
	rep := New("open", []string{"open", "-rate", "100"})
	rep.Runs = append(rep.Runs, run)
	var buf bytes.Buffer
	if err := Write(&buf, rep); err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{`"schema": "orderlab.loadtest/v1"`, `"success_uncorrected"`, `"hdr": "HISTF`, `"queue_length"`, `"peak_goroutines": 50`} {
		if !strings.Contains(buf.String(), field) {
			t.Errorf("JSON lacks %s", field)
		}
	}
	back, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	got := back.Runs[0]
	if got.Latency.Success.P99 != run.Latency.Success.P99 || got.Status["429"] != 10 || got.Server.Samples[1].QueueLength["intake"] != 4 {
		t.Errorf("round trip changed the run: %+v", got)
	}
	again, err := got.Result()
	if err != nil {
		t.Fatal(err)
	}
	for name, pair := range map[string][2]interface{ TotalCount() int64 }{
		"success": {res.Success, again.Success}, "uncorrected": {res.SuccessUncorrected, again.SuccessUncorrected},
		"rejected": {res.Rejected, again.Rejected}, "lag": {res.SchedulerLag, again.SchedulerLag},
	} {
		if pair[0].TotalCount() != pair[1].TotalCount() {
			t.Errorf("%s: %d values after the round trip, want %d", name, pair[1].TotalCount(), pair[0].TotalCount())
		}
	}
	if !res.Success.Equals(again.Success) || again.Sent != res.Sent || again.Status[201] != 1000 || again.Errors["reset"] != 3 {
		t.Error("decoded result differs from the original")
	}
}

// TestRunsFromTwoClientsMerge is the reason the histograms are in the JSON:
// two clients' runs combine into exact percentiles of the whole.
func TestRunsFromTwoClientsMerge(t *testing.T) {
	a, b := sampleResult(), sampleResult()
	b.Success.Reset()
	_ = b.Success.RecordValues(5_000_000, 1000) // the second client saw 5 s
	var runs []Run
	for _, r := range []*attack.Result{a, b} {
		run, err := FromResult("x", "http://127.0.0.1/", sampleConfig(), r, nil)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, run)
	}
	merged := attack.NewResult()
	for _, r := range runs {
		res, err := r.Result()
		if err != nil {
			t.Fatal(err)
		}
		merged.Merge(res)
	}
	run, err := FromResult("x", "http://127.0.0.1/", sampleConfig(), merged, nil)
	if err != nil {
		t.Fatal(err)
	}
	if run.Succeeded != 2000 || run.Latency.Success.Count != 2000 || run.Latency.Success.P50 > 1.001 || run.Latency.Success.P90 < 4.99 {
		t.Errorf("merged: %d ok, p50 %v, p90 %v", run.Succeeded, run.Latency.Success.P50, run.Latency.Success.P90)
	}
}

func TestParseSLO(t *testing.T) {
	slo, err := ParseSLO("p99<250ms, errors<1%,rejections<=0.05, p99.9 < 1s,rps>=100,goodput>=340")
	if err != nil {
		t.Fatal(err)
	}
	want := []Bound{
		{"p99", "<", 0.25, "p99<250ms"}, {"errors", "<", 0.01, "errors<1%"}, {"rejections", "<=", 0.05, "rejections<=0.05"},
		{"p99.9", "<", 1, "p99.9 < 1s"}, {"rps", ">=", 100, "rps>=100"},
		{"goodput", ">=", 340, "goodput>=340"},
	}
	if len(slo) != len(want) {
		t.Fatalf("%v", slo)
	}
	for i := range want {
		if slo[i] != want[i] {
			t.Errorf("bound %d = %+v, want %+v", i, slo[i], want[i])
		}
	}
	if slo, err := ParseSLO("errors < 1 %, rejections<=2.5 %"); err != nil || len(slo) != 2 || slo[0].Value != 0.01 || slo[1].Value != 0.025 {
		t.Errorf("spaced percentages: %v, %v", slo, err)
	}
	for _, bad := range []string{"p99", "p98<1s", "p99<fast", "errors<x%", "<1s", "errors<-1",
		"errors<NaN", "errors<NaN%", "rejections<Inf", "errors<+Inf%", "rps>NaN", "rps<inf", "rps>-Inf", "goodput>NaN", "goodput>"} {
		if _, err := ParseSLO(bad); err == nil {
			t.Errorf("ParseSLO(%q): no error", bad)
		}
	}
	if slo, err := ParseSLO(""); err != nil || len(slo) != 0 {
		t.Errorf("empty: %v, %v", slo, err)
	}
}

func TestEvaluateSaysWhichBoundWasMissed(t *testing.T) {
	run, err := FromResult("x", "http://127.0.0.1/", sampleConfig(), sampleResult(), nil)
	if err != nil {
		t.Fatal(err)
	}
	slo, _ := ParseSLO("p99<250ms,p50<1s,errors<1%,rejections<0.5%,goodput>=" + strconv.FormatFloat(run.Goodput, 'f', -1, 64) + ",goodput>" + strconv.FormatFloat(run.Goodput, 'f', -1, 64))
	var missed []string
	for _, e := range slo.Evaluate(run) {
		if !e.Met {
			missed = append(missed, e.Bound+"="+e.Actual)
		}
	}
	if got := strings.Join(missed, " "); got != "p99<250ms=990ms rejections<0.5%=1.0% goodput>100=100.0" {
		t.Errorf("missed %q", got)
	}
	empty, _ := FromResult("x", "http://127.0.0.1/", sampleConfig(), attack.NewResult(), nil)
	if e := slo.Evaluate(empty)[0]; e.Met {
		t.Errorf("a run without successes met %s", e.Bound)
	}
}

// pooluse and starved read the target's metrics: the share of the pool
// kept busy by calls that succeeded, and of the acquires that ended at
// their deadline. A run without the target's metrics misses them.
func TestPoolTermsReadTheServersMetrics(t *testing.T) {
	slo, err := ParseSLO("pooluse>=90%,starved<1 %,pooluse<0.5")
	if err != nil {
		t.Fatal(err)
	}
	if slo[0].Value != 0.9 || slo[1].Value != 0.01 || slo[2].Value != 0.5 {
		t.Fatalf("parsed %+v", slo)
	}
	run := Run{Server: &Server{Summary: scrape.Summary{PoolMax: 5, PoolUse: 0.97, AcquireWaits: 400, StarvedAcquires: 2}}}
	var got []string
	for _, e := range slo.Evaluate(run) {
		got = append(got, e.Bound+"="+e.Actual+":"+strconv.FormatBool(e.Met))
	}
	if s := strings.Join(got, " "); s != "pooluse>=90%=97.0%:true starved<1 %=0.5%:true pooluse<0.5=97.0%:false" {
		t.Errorf("evaluated %s", s)
	}
	for _, e := range slo.Evaluate(Run{}) {
		if e.Met || !strings.HasPrefix(e.Actual, "no pool") {
			t.Errorf("without the server's metrics %s = %q, met %v; want missed, saying why", e.Bound, e.Actual, e.Met)
		}
	}
	for _, bad := range []string{"pooluse>", "pooluse>x%", "starved<NaN", "pool_use>0.9"} {
		if _, err := ParseSLO(bad); err == nil {
			t.Errorf("ParseSLO(%q): no error", bad)
		}
	}
}

// The pool's use is over the load's own time: the scrapes' window, which
// begins before the first request and ends after the last answer, would
// count idle pool that no request could use.
func TestPoolUseIsOverTheRunsTime(t *testing.T) {
	probe, _ := FromResult("x", "http://127.0.0.1/", sampleConfig(), sampleResult(), nil)
	elapsed := probe.ElapsedSeconds
	start := time.Unix(0, 0)
	held := 0.9 * 5 * elapsed // 90 % of a pool of 5 over the run's time
	series := &scrape.Series{Samples: []scrape.Sample{
		{Time: start, PoolMax: 5},
		{Time: start.Add(time.Duration((elapsed + 1) * float64(time.Second))), PoolMax: 5, OKHolds: 100, OKHoldSeconds: held},
	}}
	run, err := FromResult("x", "http://127.0.0.1/", sampleConfig(), sampleResult(), series)
	if err != nil {
		t.Fatal(err)
	}
	if s := run.Server; math.Abs(s.PoolUse-0.9) > 1e-3 || math.Abs(s.OKHoldsPerSecond-100/elapsed) > 1e-3 {
		t.Errorf("pool use %v, ok holds %v/s over a %v s window for a %v s run; want 0.9 and %v/s", s.PoolUse, s.OKHoldsPerSecond, s.Window, elapsed, 100/elapsed)
	}
}

func TestTablesShowEveryRun(t *testing.T) {
	run, _ := FromResult("semaphore", "http://127.0.0.1:8082/", sampleConfig(), sampleResult(), &scrape.Series{Samples: []scrape.Sample{{Threads: 9}}})
	other := run
	other.Name = "unbounded"
	var md, txt, detail bytes.Buffer
	if err := WriteMarkdown(&md, []Run{run, other}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(md.String()), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "| target | time |") || !strings.Contains(lines[0], "p99 uncorr.") ||
		!strings.Contains(lines[0], "threads") || !strings.HasPrefix(lines[3], "| unbounded |") {
		t.Errorf("markdown:\n%s", md.String())
	}
	if err := WriteSummary(&txt, []Run{run}); err != nil || !strings.Contains(txt.String(), "semaphore") {
		t.Errorf("summary %v:\n%s", err, txt.String())
	}
	if err := WriteDetail(&detail, run); err != nil || !strings.Contains(detail.String(), "success, uncorrected") || !strings.Contains(detail.String(), "late 4") {
		t.Errorf("detail %v:\n%s", err, detail.String())
	}
}

// TestUnsentRequestsFailTheErrorBound: an open run whose server stalled at
// the end left requests unsent even after the drain. They waited longer
// than the timeout, so they are errors out of every request due, and an
// errors bound sees them.
func TestUnsentRequestsFailTheErrorBound(t *testing.T) {
	res := attack.NewResult()
	res.Mode = attack.ModeOpen
	res.Status[200], res.Sent, res.Unsent, res.Late = 400, 400, 197, 197
	for range 400 {
		_ = res.Success.RecordValue(1000)
	}
	run, err := FromResult("x", "http://127.0.0.1/", sampleConfig(), res, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := 197.0 / 597; run.ErrorRate != want {
		t.Errorf("error rate %v, want unsent/(sent+unsent) = %v", run.ErrorRate, want)
	}
	slo, _ := ParseSLO("p99<100ms,errors<1%")
	if ev := slo.Evaluate(run); ev[0].Met != true || ev[1].Met != false {
		t.Errorf("evaluations %+v; want the errors bound missed", ev)
	}
}
