package result

import (
	"github.com/orderlab/orderlab/lab/scenario"
	"strings"
	"testing"
	"time"

	"github.com/orderlab/orderlab/loadtest/report"
	"github.com/orderlab/orderlab/loadtest/scrape"
)

// stormRun is a run of the semaphore in an open-loop storm phase.
func stormRun(at int, goodput, amplification, rejections float64) report.Run {
	return report.Run{Name: "semaphore", StartedAt: time.Unix(int64(at), 0), ElapsedSeconds: 10, Sent: 8000,
		Goodput: goodput, Amplification: amplification,
		Server: &report.Server{Summary: scrape.Summary{Scrapes: 11, Rejections: rejections}}}
}

// stormResult is two repetitions of three open-loop phases.
func stormResult(expect ...scenario.Expectation) *Result {
	phase := func(name string, runs ...report.Run) PhaseResult {
		return PhaseResult{Name: name, BoundRPS: 400, Loadtest: &report.Report{Runs: runs}}
	}
	var spec []scenario.Phase
	for _, n := range []string{"immediate", "honor", "bucket"} {
		spec = append(spec, scenario.Phase{Name: n, Request: &scenario.Request{Method: "POST", Path: "/orders"}})
	}
	return &Result{Scenario: scenario.Scenario{Expect: expect, Phases: spec}, Phases: []PhaseResult{
		phase("immediate", stormRun(1, 380, 3.4, 18000), stormRun(4, 370, 3.5, 19000)),
		phase("honor", stormRun(2, 390, 3.0, 10000), stormRun(5, 392, 3.1, 11000)),
		phase("bucket", stormRun(3, 395, 1.02, 2000), stormRun(6, 391, 1.03, 12000)),
	}}
}

// A term held to another phase compares each run with the same target's
// run of the same repetition there, and says both figures.
func TestVersusTermsHoldARunToAnotherPhase(t *testing.T) {
	v := VerdictsOf(stormResult(
		scenario.Expectation{Target: "semaphore", Phase: "bucket", Says: "commits at least honor's", SLO: "goodput>=1xhonor"},
		scenario.Expectation{Target: "semaphore", Phase: "bucket", Says: "server rejections under half of immediate's, amplification at most 1.2",
			SLO: "server_rejections<0.5ximmediate,amplification<=1.2"}))
	want := []string{
		"bucket: semaphore committed 395/s = 1.01 × its 390/s in honor; target ≥ 1 ×: met",
		"bucket: semaphore committed 391/s = 1.00 × its 392/s in honor; target ≥ 1 ×: missed",
	}
	if v[0].Mark != VerdictMissed || strings.Join(v[0].Measured, "\n") != strings.Join(want, "\n") {
		t.Errorf("verdict %s\n%s\nwant MISSED\n%s", v[0].Mark, strings.Join(v[0].Measured, "\n"), strings.Join(want, "\n"))
	}
	want = []string{
		"bucket: semaphore sent 1.02 attempts per request (retry amplification); target ≤ 1.2: met",
		"bucket: semaphore's server counted 200 rejections/s = 0.11 × its 1,800/s in immediate; target < 0.5 ×: met",
		"bucket: semaphore sent 1.03 attempts per request (retry amplification); target ≤ 1.2: met",
		"bucket: semaphore's server counted 1,200 rejections/s = 0.63 × its 1,900/s in immediate; target < 0.5 ×: missed",
	}
	if v[1].Mark != VerdictMissed || strings.Join(v[1].Measured, "\n") != strings.Join(want, "\n") {
		t.Errorf("verdict %s\n%s\nwant MISSED\n%s", v[1].Mark, strings.Join(v[1].Measured, "\n"), strings.Join(want, "\n"))
	}
	res := stormResult(scenario.Expectation{Target: "semaphore", Phase: "bucket", Says: "x", SLO: "goodput>=1xhonor"})
	res.Phases[1].Loadtest.Runs = res.Phases[1].Loadtest.Runs[:1]
	if v := VerdictsOf(res); v[0].Mark != VerdictMissed || !strings.Contains(v[0].Measured[1], "no run of semaphore in honor") {
		t.Errorf("with no run to compare with: %s %q, want MISSED saying so", v[0].Mark, v[0].Measured)
	}
}
