package scenario

import (
	"slices"
	"testing"

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
	tab := TableOf(PhaseResult{Loadtest: &report.Report{Runs: []report.Run{run}}})
	col := slices.Index(tab.Head, "RSS/in-flight")
	if col < 0 {
		t.Fatalf("no RSS/in-flight column in %q", tab.Head)
	}
	if got := tab.Rows[0][col]; got != "25.6 KiB" {
		t.Errorf("RSS/in-flight = %s, want 25.6 KiB (10 MiB over 400 requests)", got)
	}
	run.Server.PeakInFlight = 0 // the service exposes no in-flight gauge
	if got := TableOf(PhaseResult{Loadtest: &report.Report{Runs: []report.Run{run}}}).Rows[0][col]; got != "-" {
		t.Errorf("without in-flight figures: %s, want -", got)
	}
}
