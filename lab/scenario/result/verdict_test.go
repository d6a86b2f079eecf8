package result

import (
	"strings"
	"testing"

	"github.com/orderlab/orderlab/lab/scenario"
	"github.com/orderlab/orderlab/loadtest/report"
)

// verdictResult is a result of one phase with a bound of 400/s and one run
// of the semaphore that committed 361 orders/s.
func verdictResult(quick bool, expect ...scenario.Expectation) *Result {
	run := report.Run{Name: "semaphore", Throughput: 1200, Goodput: 361, ErrorRate: 0.003,
		Latency: report.Latencies{Success: &report.Latency{Count: 3, P99: 0.21}}}
	return &Result{Quick: quick,
		Scenario: scenario.Scenario{Expect: expect, Phases: []scenario.Phase{{Name: "orders", Request: &scenario.Request{Method: "POST", Path: "/orders"}}}},
		Phases:   []PhaseResult{{Name: "orders", BoundRPS: 400, Loadtest: &report.Report{Runs: []report.Run{run}}}}}
}

func TestVerdictsSayTheFiguresInWords(t *testing.T) {
	res := verdictResult(true,
		scenario.Expectation{Target: "semaphore", Says: "near the bound", SLO: "goodput>=0.85xbound,errors<1%"},
		scenario.Expectation{Target: "semaphore", Says: "batching", SLO: "rps>=5xbound"},
		scenario.Expectation{Target: "semaphore", Says: "takes longer", SLO: "rps>=1", NotQuick: true})
	v := VerdictsOf(res)
	want := []string{
		"orders: semaphore committed 361/s = 90 % of the 400/s bound; target ≥ 85 %: met",
		"orders: semaphore errors 0.3 %; target < 1.0 %: met",
	}
	if v[0].Mark != VerdictMet || strings.Join(v[0].Measured, "\n") != strings.Join(want, "\n") {
		t.Errorf("verdict %s %q, want MET %q", v[0].Mark, v[0].Measured, want)
	}
	if w := "orders: semaphore answered 1,200/s (rejections included) = 3.0 × the 400/s bound; target ≥ 5 ×: missed"; v[1].Mark != VerdictMissed || v[1].Measured[0] != w {
		t.Errorf("verdict %s %q, want MISSED %q", v[1].Mark, v[1].Measured, w)
	}
	if v[2].Mark != VerdictNotJudged || !strings.Contains(v[2].String(), "not judged at quick size") {
		t.Errorf("a not_quick expectation in a quick run: %s, want NOT JUDGED", v[2])
	}
	if v := VerdictsOf(verdictResult(false, res.Scenario.Expect[2])); v[0].Mark != VerdictMet {
		t.Errorf("the same at full size: %s, want it judged", v[0])
	}
}
