// Package resulttest holds results that the tests of several packages
// read: a verdict picture's, a report's.
package resulttest

import (
	"time"

	"github.com/orderlab/orderlab/lab/scenario"
	"github.com/orderlab/orderlab/lab/scenario/result"
	"github.com/orderlab/orderlab/loadtest/report"
)

// Comparing is a run like a quick pool-starvation on a busy machine: the
// bound 100/s (pool 5, 50 ms holds); unbounded commits nothing, the
// semaphore 95/s in its median run of three (one run 80/s, under its 85 %
// floor) with a p99 over its 250 ms target, the pipeline 2,000/s, 20 times
// the bound.
func Comparing() *result.Result {
	run := func(name string, goodput, p99 float64, status map[string]int64) report.Run {
		r := report.Run{Name: name, Goodput: goodput, Status: status}
		if goodput == 0 {
			r.RejectionRate = 1 // every answer a 503
		}
		if p99 > 0 {
			r.Latency.Success = &report.Latency{Count: 100, P50: p99 / 2, P99: p99, Max: p99}
		}
		return r
	}
	s := scenario.Scenario{Name: "comparing", Title: "three models against one bound", Targets: []string{"unbounded", "semaphore", "pipeline"},
		Phases: []scenario.Phase{{Name: "orders", Request: &scenario.Request{Method: "POST", Path: "/orders"},
			Bound: &scenario.Bound{Concurrency: 5, Hold: scenario.Duration(50 * time.Millisecond), What: "pool 5 / 50 ms"}}},
		Expect: []scenario.Expectation{
			{Target: "semaphore", Says: "commits near the bound, p99 in time", SLO: "goodput>=0.85xbound,p99<250ms"},
			{Target: "pipeline", Says: "commits several times the bound", SLO: "goodput>=5xbound"},
			{Target: "unbounded", Says: "times out", SLO: "rejections<1%"},
		}}
	return &result.Result{Schema: result.Schema, Scenario: s, Quick: true, Count: 3, Phases: []result.PhaseResult{{Name: "orders", BoundRPS: 100,
		Loadtest: &report.Report{Runs: []report.Run{
			run("unbounded", 0, 0, map[string]int64{"503": 400}),
			run("semaphore", 99, 0.3, map[string]int64{"201": 990, "429": 9000}),
			run("pipeline", 2000, 0.2, map[string]int64{"201": 20000}),
			run("unbounded", 0, 0, map[string]int64{"503": 410}),
			run("semaphore", 80, 0.3, map[string]int64{"201": 800, "429": 9100}),
			run("pipeline", 2100, 0.2, map[string]int64{"201": 21000}),
			run("unbounded", 0, 0, map[string]int64{"503": 390}),
			run("semaphore", 95, 0.3, map[string]int64{"201": 950, "429": 9050}),
			run("pipeline", 1900, 0.2, map[string]int64{"201": 19000}),
		}}}}}
}
