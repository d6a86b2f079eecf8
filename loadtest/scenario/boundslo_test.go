package scenario

import (
	"strings"
	"testing"

	"github.com/orderlab/orderlab/loadtest/report"
)

func TestResolveSLOStatesTermsAgainstTheBound(t *testing.T) {
	got, err := resolveSLO("p99<500ms, goodput>=0.85xbound,rps>=5xbound", 100)
	if err != nil || got != "p99<500ms,goodput>=85,rps>=500" {
		t.Errorf("resolved %q (%v), want p99<500ms,goodput>=85,rps>=500", got, err)
	}
	for _, bad := range []string{"p99<0.5xbound", "goodput>=xbound", "rps>=-1xbound"} {
		if _, err := resolveSLO(bad, 100); err == nil {
			t.Errorf("%q: resolved, want an error", bad)
		}
	}
	if _, err := resolveSLO("rps>=5xbound", 0); err == nil || !strings.Contains(err.Error(), "no bound") {
		t.Errorf("no bound: %v, want the phase's missing bound named", err)
	}
}

// A term against the bound needs a phase with one.
func TestValidateWantsABoundForATermAgainstIt(t *testing.T) {
	text := strings.Replace(valid, `slo: "p99<250ms"`, `slo: "goodput>=0.9xbound"`, 1)
	if _, err := Parse([]byte(text)); err != nil {
		t.Fatalf("with a bound: %v", err)
	}
	text = strings.Replace(text, "    bound: {concurrency: 20, hold: 20ms, what: pool}\n", "", 1)
	if _, err := Parse([]byte(text)); err == nil || !strings.Contains(err.Error(), "no bound") {
		t.Errorf("without a bound: %v, want an error", err)
	}
}

// verdictResult is a result of one phase with a bound of 400/s and one run
// of the semaphore that committed 361 orders/s.
func verdictResult(quick bool, expect ...Expectation) *Result {
	run := report.Run{Name: "semaphore", Throughput: 1200, Goodput: 361, ErrorRate: 0.003,
		Latency: report.Latencies{Success: &report.Latency{Count: 3, P99: 0.21}}}
	return &Result{Quick: quick,
		Scenario: Scenario{Expect: expect, Phases: []Phase{{Name: "orders", Request: &Request{Method: "POST", Path: "/orders"}}}},
		Phases:   []PhaseResult{{Name: "orders", BoundRPS: 400, Loadtest: &report.Report{Runs: []report.Run{run}}}}}
}

func TestVerdictsSayTheFiguresInWords(t *testing.T) {
	res := verdictResult(true,
		Expectation{Target: "semaphore", Says: "near the bound", SLO: "goodput>=0.85xbound,errors<1%"},
		Expectation{Target: "semaphore", Says: "batching", SLO: "rps>=5xbound"},
		Expectation{Target: "semaphore", Says: "takes longer", SLO: "rps>=1", NotQuick: true})
	v := VerdictsOf(res)
	want := []string{
		"orders: semaphore committed 361/s = 90 % of the 400/s bound; target ≥ 85 %: met",
		"orders: semaphore errors 0.3 %; target < 1.0 %: met",
	}
	if v[0].Mark != VerdictMet || strings.Join(v[0].Measured, "\n") != strings.Join(want, "\n") {
		t.Errorf("verdict %s %q, want MET %q", v[0].Mark, v[0].Measured, want)
	}
	if w := "orders: semaphore answered 1,200/s = 3.0 × the 400/s bound; target ≥ 5 ×: missed"; v[1].Mark != VerdictMissed || v[1].Measured[0] != w {
		t.Errorf("verdict %s %q, want MISSED %q", v[1].Mark, v[1].Measured, w)
	}
	if v[2].Mark != VerdictNotJudged || !strings.Contains(v[2].String(), "not judged at quick size") {
		t.Errorf("a not_quick expectation in a quick run: %s, want NOT JUDGED", v[2])
	}
	if v := VerdictsOf(verdictResult(false, res.Scenario.Expect[2])); v[0].Mark != VerdictMet {
		t.Errorf("the same at full size: %s, want it judged", v[0])
	}
}
