package render

import (
	"fmt"
	"slices"
	"strings"

	"github.com/orderlab/orderlab/lab/scenario"
	"github.com/orderlab/orderlab/lab/scenario/result"
	"github.com/orderlab/orderlab/loadtest/report"
	"github.com/orderlab/orderlab/loadtest/scrape"
)

// SchedulerCaption heads a phase's table of what Go's scheduler saw.
const SchedulerCaption = "What Go's scheduler saw (go_sched_* from each service's /metrics, scraped with the run; " +
	"an in-process phase reads runtime/metrics itself; a service's latency buckets are a factor of about 11 apart, " +
	"so its p99 tells the order of magnitude)"

// SchedulerTable is Go's scheduler's view of phase p: per target's run
// (numbered as PostgresTable numbers them) or, for an in-process phase,
// its median run, the p99 of how long a runnable goroutine waited for a
// thread, and the goroutines by state. No rows when the phase has no run.
func SchedulerTable(p result.PhaseResult) Table {
	t := Table{Head: []string{"service", "scheduling latency p99", "runnable, peak", "runnable, mean",
		"running, peak", "waiting, peak", "not in Go, peak"}}
	row := func(name string, s scrape.Scheduler) []string {
		if !s.Exported() {
			return noSampleRow(name, "no go_sched_* series", len(t.Head))
		}
		p99 := report.FormatSeconds(s.LatencyP99)
		if s.LatencyBeyond {
			p99 = "over " + p99 // past the last finite bucket
		}
		return []string{name, p99, fmt.Sprintf("%.0f", s.PeakRunnable), fmt.Sprintf("%.1f", s.MeanRunnable),
			fmt.Sprintf("%.0f", s.PeakRunning), fmt.Sprintf("%.0f", s.PeakWaiting), fmt.Sprintf("%.0f", s.PeakNotInGo)}
	}
	switch {
	case p.Tasks != nil:
		t.Head[0] = "model"
		t.Rows = append(t.Rows, row(tasksModel(p.Tasks), p.Tasks.Scheduler))
	case p.Loadtest != nil:
		runs := p.Loadtest.Runs
		names := runNames(len(runs), func(i int) string { return runs[i].Name })
		for i, r := range runs {
			var s scrape.Scheduler
			if r.Server != nil {
				s = r.Server.Scheduler
			}
			t.Rows = append(t.Rows, row(names[i], s))
		}
	}
	return t
}

// tasksModel names an in-process run's model.
func tasksModel(t *result.TasksResult) string {
	if t.Workers > 0 {
		return fmt.Sprintf("pool of %d workers", t.Workers)
	}
	return "goroutines (one per job)"
}

// schedulerPanel is the board's panel of the go_sched_* series.
const schedulerPanel = "Scheduler: goroutines by state"

// SchedulerLine names what Go's scheduler shows of the scenario's lesson,
// as its page does, and where: the board's panel when the scenario names
// it (an in-process scenario has none) and each phase's table ("" when the
// scenario names nothing).
func SchedulerLine(s scenario.Scenario) string {
	if s.SchedulerSignal == "" {
		return ""
	}
	where := "the table \"What Go's scheduler saw\" of each phase"
	if slices.Contains(s.Panels, schedulerPanel) {
		where = fmt.Sprintf("the board's panel %q; %s", schedulerPanel, where)
	}
	return "What Go's scheduler shows: " + strings.TrimSpace(s.SchedulerSignal) + " (" + where + ")."
}
