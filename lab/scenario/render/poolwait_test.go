package render

import (
	"strings"
	"testing"
	"time"

	"github.com/orderlab/orderlab/lab/scenario"
	"github.com/orderlab/orderlab/lab/scenario/result"
	"github.com/orderlab/orderlab/loadtest/report"
	"github.com/orderlab/orderlab/loadtest/scrape"
)

// A pool-wait p99 interpolated above the deadline that ends every wait is
// shown as the deadline, and the phase says why.
func TestPoolWaitP99NeverAboveTheDeadline(t *testing.T) {
	p := result.PhaseResult{Env: map[string]string{"REQUEST_TIMEOUT": "2s"}}
	over := report.Run{Name: "unbounded", Server: &report.Server{}}
	over.Server.AcquireWaitP99 = 2.48
	under := report.Run{Name: "semaphore", Server: &report.Server{}}
	under.Server.AcquireWaitP99 = 0.3
	if w, clamped := poolWaitP99(p, over); w != 2 || !clamped {
		t.Errorf("2.48 s against a 2 s deadline: %v (clamped %v), want 2 and clamped", w, clamped)
	}
	if w, clamped := poolWaitP99(p, under); w != 0.3 || clamped {
		t.Errorf("0.3 s: %v (clamped %v), want it as it is", w, clamped)
	}
	p.Loadtest = &report.Report{Runs: []report.Run{under}}
	if n := clampNote(p); n != "" {
		t.Errorf("nothing clamped, note %q", n)
	}
	p.Loadtest.Runs = append(p.Loadtest.Runs, over)
	if n := clampNote(p); !strings.Contains(n, "2s REQUEST_TIMEOUT") {
		t.Errorf("note %q, want the deadline named", n)
	}
}

// TestThePoolWaitChartNeverShowsAWaitAboveTheDeadline: a report whose
// samples were read uncapped (written before the scrape capped them) is
// drawn with each sample at most the deadline, from copies; a run the
// scrape capped is shown capped with the note; the HTML report's chart
// holds no value above the deadline.
func TestThePoolWaitChartNeverShowsAWaitAboveTheDeadline(t *testing.T) {
	samples := func(waits ...float64) []scrape.Sample {
		var out []scrape.Sample
		for i, w := range waits {
			out = append(out, scrape.Sample{Time: time.Unix(int64(i), 0), AcquireWaitP99: w, Requests: float64(10 * i)})
		}
		return out
	}
	old := report.Run{Name: "unbounded", ElapsedSeconds: 3, Server: &report.Server{Samples: samples(0, 2.485, 1.25, 2.4791)}}
	old.Server.AcquireWaitP99 = 1.9
	p := result.PhaseResult{Name: "orders", Env: map[string]string{"REQUEST_TIMEOUT": "2s"}, Loadtest: &report.Report{Runs: []report.Run{old}}}
	runs, capped := chartRuns(p, p.Loadtest.Runs)
	if !capped {
		t.Error("samples above the deadline: not capped")
	}
	for i, x := range runs[0].Server.Samples {
		if want := min(old.Server.Samples[i].AcquireWaitP99, 2); x.AcquireWaitP99 != want {
			t.Errorf("sample %d: %v, want %v", i, x.AcquireWaitP99, want)
		}
	}
	if old.Server.Samples[1].AcquireWaitP99 != 2.485 {
		t.Error("chartRuns changed the result's own samples")
	}
	if n := clampNote(p); !strings.Contains(n, "the table and the chart show the deadline") {
		t.Errorf("note %q: want it said that the chart shows the deadline", n)
	}

	res := &result.Result{Scenario: scenario.Scenario{Name: "x", Phases: []scenario.Phase{{Name: "orders"}}}, Phases: []result.PhaseResult{p}}
	var b strings.Builder
	if err := WriteHTML(&b, res); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "Pool acquire wait p99") || strings.Contains(out, "2485") || strings.Contains(out, "2479.1") {
		t.Errorf("the HTML report's pool-wait chart shows a wait above the 2 s deadline (2485 ms or 2479.1 ms)")
	}

	scraped := report.Run{Name: "semaphore", Server: &report.Server{}}
	scraped.Server.AcquireWaitP99, scraped.Server.AcquireWaitP99Capped = 2, true
	if w, clamped := poolWaitP99(p, scraped); w != 2 || !clamped {
		t.Errorf("a run the scrape capped: %v (clamped %v), want 2 and clamped, for the note", w, clamped)
	}
}
