package attack

import (
	"testing"
	"time"
)

func TestMergeAddsCountsAndHistograms(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a, b := NewResult(), NewResult()
	a.Mode, a.Started, a.Elapsed = ModeOpen, t0, 10*time.Second
	b.Started, b.Elapsed = t0.Add(5*time.Second), 10*time.Second
	for i := range 99 {
		record(a.Success, time.Duration(i+1)*time.Millisecond) // 1..99 ms
	}
	record(b.Success, 2*time.Second)
	a.Status[200], b.Status[200], b.Status[429] = 99, 1, 3
	a.Errors["reset"], b.Errors["reset"], b.Errors["refused"] = 1, 2, 4
	a.Sent, b.Sent, a.Late, b.Late = 100, 10, 1, 2

	m := NewResult()
	m.Merge(a)
	m.Merge(b)
	if m.Mode != ModeOpen || !m.Started.Equal(t0) || m.Elapsed != 15*time.Second {
		t.Errorf("mode %q, started %v, elapsed %v; want open, %v, 15s", m.Mode, m.Started, m.Elapsed, t0)
	}
	if m.Sent != 110 || m.Late != 3 || m.Status[200] != 100 || m.Status[429] != 3 || m.Errors["reset"] != 3 || m.Errors["refused"] != 4 {
		t.Errorf("counts: sent %d late %d status %v errors %v", m.Sent, m.Late, m.Status, m.Errors)
	}
	if m.Answered() != 103 || m.ErrorCount() != 7 {
		t.Errorf("answered %d errors %d, want 103, 7", m.Answered(), m.ErrorCount())
	}
	if n := m.Success.TotalCount(); n != 100 {
		t.Fatalf("merged %d latencies, want 100", n)
	}
	if p50 := m.Success.ValueAtQuantile(50); p50 < 49_900 || p50 > 50_100 {
		t.Errorf("p50 = %dµs, want about 50ms", p50)
	}
	if max := m.Success.Max(); max < 1_999_000 || max > 2_003_000 {
		t.Errorf("max = %dµs, want about 2s (from the second result)", max)
	}
}

func TestRecordClampsOutOfRangeValues(t *testing.T) {
	h := NewHistogram()
	record(h, -time.Second)
	record(h, 2*time.Hour)
	if h.TotalCount() != 2 || h.Min() != histLowest || h.Max() < histHighest*999/1000 {
		t.Errorf("count %d min %d max %d", h.TotalCount(), h.Min(), h.Max())
	}
}
