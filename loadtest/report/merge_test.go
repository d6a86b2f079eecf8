package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/orderlab/orderlab/loadtest/attack"
)

// shardReport is generator i's report of a three-way sharded open run:
// 100 successes of (i+1)·10 ms, one 429, started i seconds after the first.
func shardReport(t *testing.T, i int) *Report {
	t.Helper()
	res := attack.NewResult()
	res.Mode = attack.ModeOpen
	res.Started = time.Date(2026, 3, 1, 12, 0, i, 0, time.UTC)
	res.Elapsed = 10 * time.Second
	_ = res.Success.RecordValues(int64(i+1)*10_000, 100)
	_ = res.SuccessUncorrected.RecordValues(int64(i+1)*5_000, 100)
	_ = res.Rejected.RecordValue(2000)
	res.Status[200], res.Status[429], res.Sent, res.Late = 100, 1, 101, int64(i)
	cfg := sampleConfig()
	cfg.Shard = attack.Shard{Index: i, Count: 3}
	run, err := FromResult("orders", "http://10.0.0.7:8080/orders", cfg, res, nil)
	if err != nil {
		t.Fatal(err)
	}
	run.ClientCPUSeconds = 1
	rep := New("open", []string{"open", "-shard", cfg.Shard.String()})
	rep.Runs = []Run{run}
	// Through the JSON, as loadtest merge reads them.
	var buf bytes.Buffer
	if err := Write(&buf, rep); err != nil {
		t.Fatal(err)
	}
	back, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return back
}

func TestMergeShardsExactly(t *testing.T) {
	reps := []*Report{shardReport(t, 0), shardReport(t, 1), shardReport(t, 2)}
	merged, notes, err := MergeReports(reps, []string{"a.json", "b.json", "c.json"})
	if err != nil || len(notes) != 0 {
		t.Fatalf("merge: %v, notes %v", err, notes)
	}
	if len(merged.Runs) != 1 || len(merged.MergedFrom) != 3 || merged.MergedFrom[2].File != "c.json" {
		t.Fatalf("merged %d runs from %+v", len(merged.Runs), merged.MergedFrom)
	}
	r := merged.Runs[0]
	if r.Sent != 303 || r.Succeeded != 300 || r.Rejected != 3 || r.Late != 3 || r.Status["200"] != 300 || r.ClientCPUSeconds != 3 {
		t.Errorf("counts: sent %d ok %d rejected %d late %d status %v cpu %v", r.Sent, r.Succeeded, r.Rejected, r.Late, r.Status, r.ClientCPUSeconds)
	}
	// The window is the union: from the first start to the last end, 12 s.
	if !r.StartedAt.Equal(reps[0].Runs[0].StartedAt) || r.ElapsedSeconds != 12 {
		t.Errorf("window: from %v for %vs, want the first start and 12s", r.StartedAt, r.ElapsedSeconds)
	}
	s := r.Settings
	if s.Shard != "" || s.Rate != 100 || s.Concurrency != 300 || s.Mode != "open" {
		t.Errorf("settings %+v: want the whole schedule (rate 100), 3x100 connections", s)
	}
	// Exact: the merged histogram is the three recorded together.
	want := attack.NewHistogram()
	for i := range 3 {
		_ = want.RecordValues(int64(i+1)*10_000, 100)
	}
	got, err := r.Latency.Success.Histogram()
	if err != nil {
		t.Fatal(err)
	}
	if !got.Equals(want) || r.Latency.Success.P50 != float64(want.ValueAtQuantile(50))/1e6 || r.Latency.SuccessUncorrected.Count != 300 {
		t.Errorf("merged success histogram: p50 %v, p90 %v, count %d", r.Latency.Success.P50, r.Latency.Success.P90, r.Latency.Success.Count)
	}

	_, notes, err = MergeReports(reps[:2], []string{"a.json", "b.json"})
	if err != nil || len(notes) != 1 || !strings.Contains(notes[0], "shards 2/3 missing") {
		t.Errorf("two of three shards: %v, notes %q", err, notes)
	}
}

func TestMergeRefusesRunsOfDifferentLoads(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*Run)
		want   string
	}{
		{"mode", func(r *Run) { r.Settings.Mode = "closed" }, "different modes: open and closed"},
		{"path", func(r *Run) { r.URL = "http://10.0.0.7:8080/work/db" }, "different paths: /orders and /work/db"},
		{"target", func(r *Run) { r.Name = "other" }, "merge reports of the same targets"},
		{"schedule", func(r *Run) { r.Settings.Rate = 50 }, "different rates: 100 and 50"},
		{"shards", func(r *Run) { r.Settings.Shard = "" }, "different shard counts: 3 shards and whole schedule"},
		{"same shard", func(r *Run) { r.Settings.Shard = "0/3" }, "shard 0/3 twice"},
		{"timeout", func(r *Run) { r.Settings.TimeoutSeconds = 1 }, "different timeouts"},
		{"retry", func(r *Run) { r.Settings.Retry = "honor" }, "different retry policies: none and honor"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := shardReport(t, 0), shardReport(t, 1)
			tc.change(&b.Runs[0])
			_, _, err := MergeReports([]*Report{a, b}, []string{"a.json", "b.json"})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestMergeRefusesHistogramsOfAnotherPrecision(t *testing.T) {
	rep := shardReport(t, 0)
	h := hdr.New(1, 3_600_000_000, 2)
	_ = h.RecordValue(1000)
	enc, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	rep.Runs[0].Latency.Success.HDR = string(enc)
	if _, _, err := Merge(rep.Runs); err == nil || !strings.Contains(err.Error(), "would not be exact") {
		t.Errorf("err = %v, want a refusal", err)
	}
}
