package result

import (
	"strings"
	"testing"
	"time"

	"github.com/orderlab/orderlab/lab/scenario"
	"github.com/orderlab/orderlab/loadtest/report"
	"github.com/orderlab/orderlab/loadtest/scrape"
)

// poolResult is one phase of POSTed orders with a bound of pool 5 / 50 ms
// = 100/s, and one semaphore run that committed goodput orders a second
// with the server's figures s.
func poolResult(goodput float64, s *scrape.Summary, expect ...scenario.Expectation) *Result {
	run := report.Run{Name: "semaphore", Goodput: goodput, Latency: report.Latencies{Success: &report.Latency{Count: 3, P99: 0.2}}}
	if s != nil {
		run.Server = &report.Server{Summary: *s}
	}
	phase := scenario.Phase{Name: "orders", Request: &scenario.Request{Method: "POST", Path: "/orders?db_delay=50ms"},
		Bound: &scenario.Bound{Concurrency: 5, Hold: scenario.Duration(50 * time.Millisecond), What: "pool 5 / 50 ms"}}
	return &Result{Quick: true, Scenario: scenario.Scenario{Expect: expect, Phases: []scenario.Phase{phase}},
		Phases: []PhaseResult{{Name: "orders", BoundRPS: 100, Loadtest: &report.Report{Runs: []report.Run{run}}}}}
}

// A pooluse term judges what the model controls, the pool kept busy by
// transactions that committed, and keeps the nominal bound in words as what
// a quiet machine would give; the line says which of the two fell short.
func TestPoolUseVerdictSaysWhichFellShort(t *testing.T) {
	e := scenario.Expectation{Target: "semaphore", Phase: "orders", Says: "the pool kept busy", SLO: "pooluse>=0.9,starved<1%"}
	busy := &scrape.Summary{PoolMax: 5, PoolUse: 0.97, OKHoldsPerSecond: 84, MeanOKHoldSeconds: 0.058, AcquireWaits: 1000, StarvedAcquires: 2}
	v := VerdictsOf(poolResult(84, busy, e))[0]
	want := []string{
		"orders: semaphore kept its 5 connections 97 % busy with transactions that committed (Little's law: 84/s × 58.0ms mean hold ÷ 5); " +
			"target ≥ 90 %: met; the machine stretched each hold from 50.0ms to 58.0ms, so it committed 84/s = 84 % of the nominal 100/s bound " +
			"(what a quiet machine would give): the machine fell short of the nominal bound, not the model",
		"orders: semaphore starved 2 of 1,000 pool acquires (0.2 %) until their deadline; target < 1.0 %: met",
	}
	if v.Mark != VerdictMet || strings.Join(v.Measured, "\n") != strings.Join(want, "\n") {
		t.Errorf("busy pool on a slow machine: %s\n%s\nwant MET\n%s", v.Mark, strings.Join(v.Measured, "\n"), strings.Join(want, "\n"))
	}

	quiet := &scrape.Summary{PoolMax: 5, PoolUse: 0.96, OKHoldsPerSecond: 94, MeanOKHoldSeconds: 0.051, AcquireWaits: 1000}
	v = VerdictsOf(poolResult(94, quiet, e))[0]
	if w := "each hold took 51.0ms against the nominal 50.0ms, so it committed 94/s = 94 % of the nominal 100/s bound (what a quiet machine would give)"; v.Mark != VerdictMet || !strings.HasSuffix(v.Measured[0], w) {
		t.Errorf("quiet machine: %s %q, want MET ending %q (nothing fell short)", v.Mark, v.Measured[0], w)
	}

	idle := &scrape.Summary{PoolMax: 5, PoolUse: 0.55, OKHoldsPerSecond: 55, MeanOKHoldSeconds: 0.05, AcquireWaits: 1000, StarvedAcquires: 300}
	v = VerdictsOf(poolResult(55, idle, e))[0]
	if v.Mark != VerdictMissed || !strings.Contains(v.Measured[0], "target ≥ 90 %: missed") ||
		!strings.HasSuffix(v.Measured[0], "the model fell short: the pool stood idle or served calls that failed") ||
		!strings.HasSuffix(v.Measured[1], "(30.0 %) until their deadline; target < 1.0 %: missed") {
		t.Errorf("idle pool: %s %q, want MISSED, the model named", v.Mark, v.Measured)
	}

	edge := &scrape.Summary{PoolMax: 5, PoolUse: 0.899, OKHoldsPerSecond: 69, MeanOKHoldSeconds: 0.065, AcquireWaits: 400}
	v = VerdictsOf(poolResult(73, edge, e))[0]
	if v.Mark != VerdictMissed || !strings.Contains(v.Measured[0], "kept its 5 connections 89.9 % busy") {
		t.Errorf("a miss by a tenth: %s %q, want MISSED with 89.9 %%, not a rounded 90 %%", v.Mark, v.Measured[0])
	}

	v = VerdictsOf(poolResult(84, nil, e))[0]
	if v.Mark != VerdictMissed || v.Measured[0] != "orders: semaphore: no pool metrics, so no pool use; target ≥ 90 %: missed" {
		t.Errorf("no server metrics: %s %q, want MISSED saying so", v.Mark, v.Measured)
	}
}

// A share just under or over its target never reads as the target itself.
func TestBesideRoundsAwayFromTheTarget(t *testing.T) {
	for _, c := range []struct {
		v, target float64
		want      string
	}{
		{0.8996, 0.9, "89.9 %"},
		{0.9004, 0.9, "90.1 %"},
		{0.9, 0.9, "90 %"},
		{0.97, 0.9, "97 %"},
	} {
		if got := beside(c.v, c.target); got != c.want {
			t.Errorf("beside(%v, %v) = %q, want %q", c.v, c.target, got, c.want)
		}
	}
}
