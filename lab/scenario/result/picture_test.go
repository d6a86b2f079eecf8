package scenario

import (
	"slices"
	"testing"
	"time"

	"github.com/orderlab/orderlab/loadtest/report"
)

// comparing is a run like a quick pool-starvation on a busy machine: the
// bound 100/s (pool 5, 50 ms holds); unbounded commits nothing, the
// semaphore 95/s in its median run of three (one run 80/s, under its 85 %
// floor) with a p99 over its 250 ms target, the pipeline 2,000/s, 20 times
// the bound.
func comparing() *Result {
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
	s := Scenario{Name: "comparing", Title: "three models against one bound", Targets: []string{"unbounded", "semaphore", "pipeline"},
		Phases: []Phase{{Name: "orders", Request: &Request{Method: "POST", Path: "/orders"},
			Bound: &Bound{Concurrency: 5, Hold: Duration(50 * time.Millisecond), What: "pool 5 / 50 ms"}}},
		Expect: []Expectation{
			{Target: "semaphore", Says: "commits near the bound, p99 in time", SLO: "goodput>=0.85xbound,p99<250ms"},
			{Target: "pipeline", Says: "commits several times the bound", SLO: "goodput>=5xbound"},
			{Target: "unbounded", Says: "times out", SLO: "rejections<1%"},
		}}
	return &Result{Schema: Schema, Scenario: s, Quick: true, Count: 3, Phases: []PhaseResult{{Name: "orders", BoundRPS: 100,
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

func TestThePictureHoldsEachModelToItsPhasesBound(t *testing.T) {
	pic := PictureOf(comparing())
	if len(pic.Phases) != 1 || pic.Phases[0].Counts != "committed" || pic.Phases[0].BoundRPS != 100 || len(pic.Phases[0].Models) != 3 {
		t.Fatalf("picture %+v: want the one phase, counting commits against 100/s, three models", pic)
	}
	m := map[string]PictureModel{}
	for _, x := range pic.Phases[0].Models {
		m[x.Name] = x
	}
	// The median run of three, as the report's charts.
	if s := m["semaphore"]; s.Succeeded != 95 || s.OfBound != 0.95 || s.AtLeast != 0.85 || s.P99Target != 0.25 {
		t.Errorf("semaphore %+v: want its median 95/s = 0.95 ×, held to 0.85 × and a p99 under 250 ms", s)
	}
	// A term missed in any run is missed, as its verdict says: the 80/s run.
	if s := m["semaphore"]; !slices.Equal(slices.Sorted(slices.Values(s.Missed)), []string{"goodput>=0.85xbound", "p99<250ms"}) {
		t.Errorf("semaphore missed %q: want the 80/s run's floor and the p99", s.Missed)
	}
	if p := m["pipeline"]; p.Succeeded != 2000 || p.OfBound != 20 || p.AtLeast != 5 || len(p.Missed) != 0 {
		t.Errorf("pipeline %+v: want 2,000/s = 20 ×, held to 5 ×, nothing missed", p)
	}
	if u := m["unbounded"]; u.Succeeded != 0 || !slices.Equal(u.Missed, []string{"rejections<1%"}) {
		t.Errorf("unbounded %+v: want nothing committed, its rejections missed", u)
	}
	rows := pictureRows(pic)
	if len(rows) != 3 || !rows[0].MissedOther || rows[0].MissedRate || !rows[1].MissedRate || !rows[1].MissedP99 || rows[2].MissedRate ||
		rows[1].Label != "semaphore" || rows[1].Color != 1 || rows[1].Counts != "committed" {
		t.Errorf("rows %+v: want unbounded's miss on its answers, the semaphore's on its rate and p99, the pipeline's none", rows)
	}
}
