package catalog

import (
	"os"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/orderlab/orderlab/lab/scenario"
)

// loadTime is the least time a scenario's load takes at full size: every
// HTTP phase's duration once per target (the runner measures the targets
// one at a time) and each replica set once, and every in-process phase of
// sleeping jobs at its bound. Start-up, warm-ups, scrapes and bursts are
// left out, so the real run is longer.
func loadTime(s scenario.Scenario) time.Duration {
	var d time.Duration
	for _, p := range s.Phases {
		switch {
		case p.Load != nil:
			d += p.Load.Duration.D() * time.Duration(len(s.Targets))
		case p.Tasks != nil && p.Tasks.Sleep > 0:
			jobs, workers := p.Tasks.Jobs, p.Tasks.Workers
			if workers > 0 {
				d += time.Duration((jobs+workers-1)/workers) * p.Tasks.Sleep.D()
			} else {
				d += p.Tasks.Sleep.D()
			}
		}
	}
	return d
}

// TestScenariosFitTheMakefileTimeout: `make scenarios` runs the whole
// catalog under `timeout`; the load alone must fit well inside it, and the
// Makefile must say how long the load takes, at full size and quick
// (docs/development.md, Make targets, quotes the same line).
func TestScenariosFitTheMakefileTimeout(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	var total, quick time.Duration
	for _, s := range all {
		total += loadTime(s)
		quick += loadTime(scenario.Quick(s))
	}
	makefile, err := os.ReadFile("../../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^scenarios:.*\n\ttimeout (\d+)m `).FindSubmatch(makefile)
	if m == nil {
		t.Fatal("the Makefile's scenarios target runs no `timeout <N>m`")
	}
	limit, _ := time.ParseDuration(string(m[1]) + "m")
	t.Logf("the catalog's load at full size: %v (the Makefile's timeout: %v)", total.Round(time.Second), limit)
	if total > limit*2/3 {
		t.Errorf("the catalog's load alone takes %v, more than two thirds of the %v timeout of `make scenarios`", total.Round(time.Second), limit)
	}
	want := regexp.MustCompile(`(?m)^scenarios:.*## all \w+ scenarios \(their load alone: (\d+) minutes at full size, (\d+) with QUICK=1`).FindSubmatch(makefile)
	if want == nil {
		t.Fatal("the Makefile's scenarios line does not say how long the load takes: `## all <count> scenarios (their load alone: N minutes at full size, M with QUICK=1 ...`")
	}
	if got := int(total.Round(time.Minute) / time.Minute); string(want[1]) != strconv.Itoa(got) {
		t.Errorf("the Makefile says the load takes %s minutes; the catalog's phases add up to %d", want[1], got)
	}
	if got := int(quick.Round(time.Minute) / time.Minute); string(want[2]) != strconv.Itoa(got) {
		t.Errorf("the Makefile says the quick load takes %s minutes; the catalog's quick phases add up to %d", want[2], got)
	}
}
