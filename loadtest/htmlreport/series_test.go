package htmlreport

import (
	"math"
	"testing"
	"time"

	"github.com/orderlab/orderlab/loadtest/report"
	"github.com/orderlab/orderlab/loadtest/scrape"
)

// run is a run whose server answered in lumps: 100 requests in every other
// quarter second, none in between (50 a quarter second, 200/s on average).
func lumpyRun(samples int) report.Run {
	t0 := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	r := report.Run{Name: "unbounded", StartedAt: t0, Server: &report.Server{}}
	total := 0.0
	for i := range samples {
		if i > 0 && i%2 == 1 {
			total += 100
		}
		r.Server.Samples = append(r.Server.Samples, scrape.Sample{Time: t0.Add(time.Duration(i) * 250 * time.Millisecond), Requests: total})
	}
	return r
}

func TestRateChartsAverageOverTheWindowAndKeepThePerSampleRate(t *testing.T) {
	m := OverTime[0]
	if !m.Rate || m.Title != "Throughput (answered requests/s)" {
		t.Fatalf("OverTime[0] = %q, want the throughput rate", m.Title)
	}
	r := lumpyRun(17) // 4 s
	raw, smooth := m.over(r), m.windowed(r)
	if len(raw) != 16 || len(smooth) != 16 {
		t.Fatalf("%d raw and %d windowed points, want one per sample after the first", len(raw), len(smooth))
	}
	for i, p := range raw {
		if want := []float64{400, 0}[i%2]; p.Y != want {
			t.Errorf("raw point %d = %v, want %v: the rate between two samples", i, p.Y, want)
		}
	}
	for i, p := range smooth {
		if p.X < RateWindow.Seconds() {
			continue // the first window, not yet whole
		}
		if math.Abs(p.Y-200) > 1e-9 {
			t.Errorf("windowed point %d (%.2f s) = %v, want 200/s over %s", i, p.X, p.Y, RateWindow)
		}
	}
}

func TestARateCountsARestartedCounterFromItsNewValue(t *testing.T) {
	r := lumpyRun(9)
	r.Server.Samples[8].Requests = 30 // after 300: the service restarted and answered 30
	raw := OverTime[0].over(r)
	if got := raw[len(raw)-1].Y; got != 120 {
		t.Errorf("rate across the restart = %v, want 30 in 250 ms = 120/s", got)
	}
}

func TestGaugesAreDrawnAsSampled(t *testing.T) {
	r := lumpyRun(5)
	for i := range r.Server.Samples {
		r.Server.Samples[i].Goroutines = float64(10 * i)
	}
	for _, m := range OverTime {
		if m.Title != "Goroutines" {
			continue
		}
		pts := m.windowed(r)
		if len(pts) != 5 || pts[4].Y != 40 {
			t.Errorf("goroutines = %v, want each sample as it is", pts)
		}
	}
}
