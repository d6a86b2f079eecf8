package result

import (
	"strings"
	"testing"

	"github.com/orderlab/orderlab/lab/scenario"
)

// Misses holds one run, right after it, to what can be held now: a run
// that meets its expectation misses nothing, one that misses it is named
// with its figure, and a versus term against a phase that has not run yet
// is left for the verdicts, where it would read as a miss.
func TestMissesHoldsARunToWhatIsKnownRightAfterIt(t *testing.T) {
	res := stormResult(scenario.Expectation{Target: "semaphore", Phase: "bucket", Says: "commits at least honor's", SLO: "goodput>=1xhonor"})
	bucket := res.Phases[2].Loadtest.Runs
	if m := Misses(res, 2, bucket[0]); len(m) != 0 {
		t.Errorf("the first repetition's bucket run (395/s against 390/s) misses %v, want nothing", m)
	}
	m := Misses(res, 2, bucket[1])
	if len(m) != 1 || m[0].Mark != VerdictMissed || m[0].Target != "semaphore" || m[0].Phase != "bucket" ||
		strings.Join(m[0].Measured, "\n") != "bucket: semaphore committed 391/s = 1.00 × its 392/s in honor; target ≥ 1 ×: missed" {
		t.Fatalf("the second repetition's bucket run (391/s against 392/s) misses %+v, want the one expectation with its figure", m)
	}
	if got := m[0].String(); !strings.HasPrefix(got, "MISSED semaphore, bucket: goodput>=1xhonor: commits at least honor's (bucket: semaphore committed 391/s") {
		t.Errorf("in a line: %q", got)
	}

	// Phase immediate runs first: its term against bucket waits, its own
	// term is held at once.
	res = stormResult(scenario.Expectation{Target: "semaphore", Phase: "immediate", Says: "x", SLO: "goodput>=1xbucket"},
		scenario.Expectation{Says: "y", SLO: "goodput>=0.5xbucket,amplification<=1.2"},
		scenario.Expectation{Target: "unbounded", Says: "not this target's", SLO: "amplification<=1.2"},
		scenario.Expectation{Says: "no figure: read from the table"})
	res.Phases[1].Loadtest.Runs, res.Phases[2].Loadtest.Runs = nil, nil
	immediate := res.Phases[0].Loadtest.Runs[0]
	m = Misses(res, 0, immediate)
	if len(m) != 1 || m[0].Says != "y" || strings.Join(m[0].Measured, "\n") !=
		"immediate: semaphore sent 3.40 attempts per request (retry amplification); target ≤ 1.2: missed" {
		t.Errorf("immediate, before bucket ran: misses %+v, want y's own term alone", m)
	}
	if v := VerdictsOf(res); v[0].Mark != VerdictMissed {
		t.Errorf("VerdictsOf at the end, bucket never run: %s, want MISSED (nothing to compare with)", v[0].Mark)
	}
}
