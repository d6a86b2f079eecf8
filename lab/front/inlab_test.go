//go:build labcheck

package front

import (
	"fmt"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/orderlab/orderlab/lab/front/api"
	"github.com/orderlab/orderlab/lab/scenario"
	"github.com/orderlab/orderlab/lab/scenario/catalog"
)

// TestEveryInLabScenarioRunsAtFullSizeFromThePage: every scenario of the
// catalog that the lab can run, started from the page's API against the
// three services behind the lab's database proxy, runs to its end (done,
// no error, a verdict for each expectation, its report) and leaves the
// knobs as they were, at full size: every pool, dependent knob, client
// count, rate and bound as the scenario states it, so that a knob the
// services refuse at full size (a pipeline's workers above its pool, say)
// fails here. A missed expectation is the run's answer, not a failure; a
// run that does not finish is. Only the time is cut: each scenario is
// given a quick factor of 1, which shortens its phases to a few seconds
// (a db_stop phase keeps its outage) and shrinks nothing; each phase's
// bound on the page is the full-size one.
//
// Quick mode is run elsewhere: every in-the-lab scenario quick in the
// compose lab (make lab-test), and every pitfall quick from this page's
// API as a mystery (TestEveryMysteryRunsQuickFromThePage).
func TestEveryInLabScenarioRunsAtFullSizeFromThePage(t *testing.T) {
	all, inLab := inLabScenarios(t)
	for _, ss := range [][]scenario.Scenario{all, inLab} {
		for i := range ss {
			ss[i].QuickFactor = 1
		}
	}
	f := startFixture(t, fixtureConfig{services: scenario.Services, catalog: all, proxy: true})
	runEach(t, f, inLab, func(s scenario.Scenario, done api.Run) {
		if done.Title != s.Title {
			t.Errorf("%s: title %q, want the full-size %q", s.Name, done.Title, s.Title)
		}
		for i, p := range s.Phases {
			if p.Bound == nil || i >= len(done.PhaseStarts) {
				continue
			}
			if got := done.PhaseStarts[i].BoundRPS; got != p.Bound.RPS() {
				t.Errorf("%s, phase %s: bound %.0f/s, want the full-size %.0f/s (%s)", s.Name, p.Name, got, p.Bound.RPS(), p.Bound.What)
			}
		}
	})
}

// inLabScenarios is the catalog and those of it the lab can run.
func inLabScenarios(t *testing.T) (all, inLab []scenario.Scenario) {
	t.Helper()
	all, err := catalog.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		if ok, _ := scenario.InLab(s); ok {
			inLab = append(inLab, s)
		}
	}
	if len(inLab) < len(all)/2 {
		t.Fatalf("%d of %d scenarios can run in the lab", len(inLab), len(all))
	}
	return all, inLab
}

// runEach starts each scenario from f's page (in quick mode: the
// scenarios' own quick factor says how much it shortens), one after the
// other, and requires each to end done, with no error, its report, a
// verdict for each expectation and a start for each phase; check looks at
// what is particular to the test. The knobs must be back at the end.
func runEach(t *testing.T, f *fixture, scenarios []scenario.Scenario, check func(s scenario.Scenario, done api.Run)) {
	t.Helper()
	before := map[string]map[string]string{}
	for _, svc := range scenario.Services {
		before[svc] = f.knobs(svc)
	}
	for _, s := range scenarios {
		var run api.Run
		if code, body := f.call("POST", "/api/runs", startRequest{Scenario: s.Name, Quick: true, By: "test"}, &run); code != http.StatusAccepted {
			t.Errorf("%s: start: %d %s", s.Name, code, body)
			continue
		}
		within := 2*time.Minute + 3*time.Duration(run.EndsAt.Sub(run.StartedAt))
		started := time.Now()
		done := f.waitRunWithin(run.ID, within, s.Name+"'s end", func(r api.Run) error {
			if r.EndedAt == nil {
				return fmt.Errorf("state %s, phase %+v", r.State, r.Phase)
			}
			return nil
		})
		t.Logf("%s: %s in %v (planned %v)", s.Name, done.State, time.Since(started).Round(time.Second), run.EndsAt.Sub(run.StartedAt).Round(time.Second))
		if done.State != api.StateDone || done.Error != "" || done.Report == nil {
			t.Errorf("%s: %s, error %q, report %v: want it done; its log ends:\n%s", s.Name, done.State, done.Error, done.Report, tailLines(done.Log, 15))
			continue
		}
		if len(done.Verdicts) < len(s.Expect) || len(done.PhaseStarts) != len(s.Phases) {
			t.Errorf("%s: %d verdicts for %d expectations, %d phase starts for %d phases", s.Name, len(done.Verdicts), len(s.Expect), len(done.PhaseStarts), len(s.Phases))
		}
		for _, v := range done.Verdicts {
			t.Logf("   %s %s: %s %v", v.Mark, v.Target, v.SLO, v.Measured)
		}
		check(s, done)
	}
	for _, svc := range scenario.Services {
		if got := f.knobs(svc); !maps.Equal(got, before[svc]) {
			t.Errorf("%s's knobs after every run: %v, want them back at %v", svc, got, before[svc])
		}
	}
}

// tailLines are the last n of lines, one a line.
func tailLines(lines []string, n int) string {
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
