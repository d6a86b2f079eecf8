package render

import (
	"slices"
	"testing"

	"github.com/orderlab/orderlab/lab/scenario/result"
	"github.com/orderlab/orderlab/loadtest/report"
	"github.com/orderlab/orderlab/loadtest/scrape"
)

// A phase with a bound shows its pool use in the server-side table;
// a report from before the hold's outcome label has none to show, and no
// column of dashes either.
func TestTableShowsThePoolUse(t *testing.T) {
	runs := []report.Run{
		{Name: "unbounded", Goodput: 8, Server: &report.Server{Summary: scrape.Summary{Scrapes: 3, PoolMax: 5, PoolUse: 0.04}}},
		{Name: "semaphore", Goodput: 84, Server: &report.Server{Summary: scrape.Summary{Scrapes: 3, PoolMax: 5, PoolUse: 0.97}}},
	}
	_, tab := TableOf(result.PhaseResult{BoundRPS: 100, Loadtest: &report.Report{Runs: runs}}).Split()
	col := slices.Index(tab.Head, "pool use")
	if col < 0 || tab.Rows[0][col] != "4 %" || tab.Rows[1][col] != "97 %" {
		t.Fatalf("server-side head %q, rows %q: want pool use 4 %% and 97 %%", tab.Head, tab.Rows)
	}
	for i := range runs {
		runs[i].Server.PoolUse = 0
	}
	if _, tab := TableOf(result.PhaseResult{BoundRPS: 100, Loadtest: &report.Report{Runs: runs}}).Split(); slices.Contains(tab.Head, "pool use") {
		t.Errorf("head %q: a pool use column without a figure", tab.Head)
	}
}
