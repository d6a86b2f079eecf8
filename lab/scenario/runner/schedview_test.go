//go:build labcheck

package runner

import (
	"strings"
	"testing"

	"github.com/orderlab/orderlab/lab/scenario/render"
	"github.com/orderlab/orderlab/lab/scenario/result"
)

// reportSaysWhatTheSchedulerSaw: the Markdown report of res has a table of
// what Go's scheduler saw for each of its phases, and says want.
func reportSaysWhatTheSchedulerSaw(t *testing.T, res *result.Result, want ...string) {
	t.Helper()
	var b strings.Builder
	if err := render.WriteMarkdown(&b, res); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	if n := strings.Count(md, render.SchedulerCaption); n != len(res.Phases) {
		t.Errorf("the report has %d tables of what the scheduler saw, want one per phase (%d)", n, len(res.Phases))
	}
	for _, w := range append([]string{render.SchedulerLine(res.Scenario)}, want...) {
		if w == "" || !strings.Contains(md, w) {
			t.Errorf("the report does not say %q", w)
		}
	}
}

// The quick os-thread-pinning against unbounded: a request waiting on a
// timer is a waiting goroutine, one waiting in the nanosleep system call a
// goroutine not in Go (holding an OS thread), as the service's go_sched_*
// series say; each phase's report has the table.
func TestSchedulerViewOfOSThreadPinning(t *testing.T) {
	res := runCatalogQuick(t, buildServices(t), "os-thread-pinning", "unbounded")
	timer, syscall := res.Phases[0].Loadtest.Runs[0], res.Phases[1].Loadtest.Runs[0]
	c := float64(timer.Settings.Concurrency)
	if timer.Server == nil || syscall.Server == nil {
		t.Fatal("a run without server metrics")
	}
	if sc := timer.Server.Scheduler; !sc.Exported() || sc.PeakWaiting < c/2 || sc.PeakNotInGo > c/10 {
		t.Errorf("timer, %v clients: %+v; want about as many waiting, few not in Go", c, sc)
	}
	if sc := syscall.Server.Scheduler; sc.PeakNotInGo < c/2 {
		t.Errorf("syscall, %v clients: %+v; want about as many not in Go", c, sc)
	}
	reportSaysWhatTheSchedulerSaw(t, res, "| unbounded |", `the board's panel "Scheduler: goroutines by state"`)
}
