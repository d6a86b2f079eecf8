package render

import (
	"html"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/orderlab/orderlab/lab/scenario"
	"github.com/orderlab/orderlab/lab/scenario/result"
	"github.com/orderlab/orderlab/loadtest/report"
	"github.com/orderlab/orderlab/loadtest/scrape"
)

// TestRSSIsDividedByTheRequestsInFlight: an open run allowed 2,000
// connections but the server never held more than 400 requests. The RSS
// growth (10 MiB) is per request the server held: 25.6 KiB, not 5.1 KiB.
func TestRSSIsDividedByTheRequestsInFlight(t *testing.T) {
	run := report.Run{Name: "unbounded", Settings: report.Settings{Mode: "open", Concurrency: 2000}, ElapsedSeconds: 1,
		Server: &report.Server{
			Summary: scrape.Summary{Scrapes: 3, PeakRSSBytes: 110 << 20, PeakInFlight: 400},
			Samples: []scrape.Sample{{RSSBytes: 100 << 20}, {RSSBytes: 110 << 20, InFlight: 400}, {RSSBytes: 105 << 20}},
		}}
	tab := TableOf(result.PhaseResult{Loadtest: &report.Report{Runs: []report.Run{run}}})
	col := slices.Index(tab.Head, "RSS/in-flight")
	if col < 0 {
		t.Fatalf("no RSS/in-flight column in %q", tab.Head)
	}
	if got := tab.Rows[0][col]; got != "25.6 KiB" {
		t.Errorf("RSS/in-flight = %s, want 25.6 KiB (10 MiB over 400 requests)", got)
	}
	run.Server.PeakInFlight = 0 // the service exposes no in-flight gauge
	if got := TableOf(result.PhaseResult{Loadtest: &report.Report{Runs: []report.Run{run}}}).Rows[0][col]; got != "-" {
		t.Errorf("without in-flight figures: %s, want -", got)
	}
}

// TestRSSIsDividedByTheConnections: 19,000 idle connections grew RSS by
// 76 MiB over the baseline taken before the first one opened: 4.1 KiB each.
func TestRSSIsDividedByTheConnections(t *testing.T) {
	run := report.Run{Name: "unbounded", Settings: report.Settings{Mode: "idle", Concurrency: 19000}, ElapsedSeconds: 1,
		Server: &report.Server{
			Summary: scrape.Summary{Scrapes: 3, PeakRSSBytes: 100<<20 + 19000*4200, PeakConnections: 19000},
			Samples: []scrape.Sample{{RSSBytes: 100 << 20}, {RSSBytes: 100<<20 + 19000*4200, Connections: 19000}},
		}}
	tab := TableOf(result.PhaseResult{Loadtest: &report.Report{Runs: []report.Run{run}}})
	for head, want := range map[string]string{"connections": "19000", "RSS/conn": "4.1 KiB", "RSS/in-flight": "-"} {
		if col := slices.Index(tab.Head, head); col < 0 || tab.Rows[0][col] != want {
			t.Errorf("%s = %v, want %s (head %q)", head, tab.Rows[0], want, tab.Head)
		}
	}
}

// A target that ran several times gets the median of its runs and their
// range; the charts show the run with the median goodput.
func TestRepeatedRunsShowTheMedianAndRange(t *testing.T) {
	var runs []report.Run
	for _, g := range []float64{300, 100, 200} {
		runs = append(runs, report.Run{Name: "semaphore", ElapsedSeconds: 10, Goodput: g, Throughput: g})
	}
	runs = append(runs, report.Run{Name: "pipeline", ElapsedSeconds: 10, Goodput: 50, Throughput: 50})
	tab := TableOf(result.PhaseResult{BoundRPS: 400, Loadtest: &report.Report{Runs: runs}})
	if len(tab.Rows) != 2 || tab.Rows[0][0] != "semaphore" || tab.Rows[1][0] != "pipeline" {
		t.Fatalf("rows %q: want one per target, in order", tab.Rows)
	}
	col := slices.Index(tab.Head, "goodput")
	if got := tab.Rows[0][col]; got != "200 (100-300)" {
		t.Errorf("goodput of three runs = %q, want the median and the range", got)
	}
	if got := tab.Rows[1][col]; got != "50" {
		t.Errorf("goodput of one run = %q, want it alone", got)
	}
	if got := tab.Rows[0][slices.Index(tab.Head, "of bound")]; got != "50 % (25 %-75 %)" {
		t.Errorf("of bound = %q", got)
	}
	rep := result.Representative(runs)
	if len(rep) != 2 || rep[0].Goodput != 200 || rep[1].Goodput != 50 {
		t.Errorf("representative runs %+v, want the median-goodput run of each target", rep)
	}
	if m, lo, hi := result.Median([]float64{4, 1, 3, 2}); m != 2.5 || lo != 1 || hi != 4 {
		t.Errorf("Median of four = %v (%v-%v), want 2.5 (1-4)", m, lo, hi)
	}
}

func TestSplitKeepsTheClientsFiguresAndMovesTheServersAndVerdictsMerge(t *testing.T) {
	slo := func(actual string) []report.Evaluation {
		return []report.Evaluation{{Bound: "max<=300ms", Actual: actual, Met: true}}
	}
	runs := []report.Run{
		{Name: "unbounded", Goodput: 1, SLO: slo("238ms"), Server: &report.Server{Summary: scrape.Summary{Scrapes: 1, PeakGoroutines: 10}}},
		{Name: "unbounded", Goodput: 2, SLO: slo("243ms"), Server: &report.Server{Summary: scrape.Summary{Scrapes: 1, PeakGoroutines: 12}}},
	}
	main, detail := TableOf(result.PhaseResult{Loadtest: &report.Report{Runs: runs}}).Split()
	if main.Head[0] != "service" || detail.Head[0] != "service" || !slices.Contains(main.Head, "p99") || slices.Contains(main.Head, "goroutines") {
		t.Errorf("main table %q: want the service, the client's figures, not the server's", main.Head)
	}
	if col := slices.Index(detail.Head, "goroutines"); col < 0 || detail.Rows[0][col] != "11 (10-12)" {
		t.Errorf("server table %q %q: want the goroutines, 11 (10-12)", detail.Head, detail.Rows)
	}
	if got := main.Rows[0][len(main.Head)-1]; got != "max<=300ms met (238ms / 243ms)" {
		t.Errorf("expectation = %q, want one verdict with each run's figure", got)
	}
	runs[1].SLO[0].Met = false
	main, _ = TableOf(result.PhaseResult{Loadtest: &report.Report{Runs: runs}}).Split()
	if got := main.Rows[0][len(main.Head)-1]; got != "max<=300ms met (238ms) / max<=300ms MISSED (243ms)" {
		t.Errorf("expectation = %q, want run by run when the runs disagree", got)
	}
}

// TestPhaseShowsTheGeneratorsLateness: an open run's lateness (p50, p99,
// max) stands next to its latencies, and its warning under the table, in
// the table, the Markdown and the HTML.
func TestPhaseShowsTheGeneratorsLateness(t *testing.T) {
	warn := "the generator's own lateness p99 3ms is more than 10 % of the measured p50 2ms"
	run := report.Run{Name: "semaphore", Settings: report.Settings{Mode: "open"}, ElapsedSeconds: 1,
		Latency: report.Latencies{
			Success:      &report.Latency{Count: 100, P50: 0.002, P99: 0.004, Max: 0.005},
			SchedulerLag: &report.Latency{Count: 100, P50: 0.000012, P99: 0.003, Max: 0.004},
		},
		Warnings: []string{warn}}
	p := result.PhaseResult{Name: "steady", Loadtest: &report.Report{Runs: []report.Run{run, run}}}
	tab := TableOf(p)
	for head, want := range map[string]string{"lag p50": report.FormatSeconds(0.000012), "lag p99": report.FormatSeconds(0.003), "lag max": report.FormatSeconds(0.004)} {
		col := slices.Index(tab.Head, head)
		if col < 0 || !strings.HasPrefix(tab.Rows[0][col], want+" (") {
			t.Errorf("%s: row %q, want %s (head %q)", head, tab.Rows[0], want, tab.Head)
		}
		if col < slices.Index(tab.Head, "max") {
			t.Errorf("%s comes before the latencies: %q", head, tab.Head)
		}
	}
	if w := Warnings(p); len(w) != 1 || w[0] != "semaphore: "+warn {
		t.Errorf("warnings %q, want the one warning once, with its target", w)
	}
	res := &result.Result{Scenario: scenario.Scenario{Name: "x", Phases: []scenario.Phase{{Name: "steady"}}}, Phases: []result.PhaseResult{p}}
	for name, write := range map[string]func(io.Writer, *result.Result) error{"markdown": WriteMarkdown, "html": WriteHTML} {
		var b strings.Builder
		if err := write(&b, res); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if name == "html" {
			out = html.UnescapeString(out)
		}
		if !strings.Contains(out, "lag p99") || !strings.Contains(out, warn) {
			t.Errorf("%s: no lag column or no warning", name)
		}
	}
	run.Latency.SchedulerLag, run.Warnings = nil, nil // a run without lateness (burst)
	if tab := TableOf(result.PhaseResult{Loadtest: &report.Report{Runs: []report.Run{run}}}); slices.Contains(tab.Head, "lag p50") {
		t.Errorf("head %q: lag columns without lateness", tab.Head)
	}
}
