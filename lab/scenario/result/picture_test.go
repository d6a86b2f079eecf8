package result_test

import (
	"slices"
	"testing"

	"github.com/orderlab/orderlab/lab/scenario/result"
	"github.com/orderlab/orderlab/lab/scenario/result/resulttest"
)

func TestThePictureHoldsEachModelToItsPhasesBound(t *testing.T) {
	pic := result.PictureOf(resulttest.Comparing())
	if len(pic.Phases) != 1 || pic.Phases[0].Counts != "committed" || pic.Phases[0].BoundRPS != 100 || len(pic.Phases[0].Models) != 3 {
		t.Fatalf("picture %+v: want the one phase, counting commits against 100/s, three models", pic)
	}
	m := map[string]result.PictureModel{}
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
	rows := result.PictureRows(pic)
	if len(rows) != 3 || !rows[0].MissedOther || rows[0].MissedRate || !rows[1].MissedRate || !rows[1].MissedP99 || rows[2].MissedRate ||
		rows[1].Label != "semaphore" || rows[1].Color != 1 || rows[1].Counts != "committed" {
		t.Errorf("rows %+v: want unbounded's miss on its answers, the semaphore's on its rate and p99, the pipeline's none", rows)
	}
}
