package result

import (
	"slices"
	"time"

	"github.com/orderlab/orderlab/lab/scenario"
	"github.com/orderlab/orderlab/loadtest/report"
)

// Snapshot is a target's flight recorder window, kept beside the report
// when its run of the phase missed an expectation or a pitfall alert fired
// on it (at most one per phase and target): the last seconds of the
// service's execution trace, read with `go tool trace FILE`
// (docs/reference/scenario-format.md, "What a run writes"). A snapshot
// that could not be taken is kept with its error, File empty.
type Snapshot struct {
	Target string `json:"target"`
	// File is the trace's path relative to the report:
	// <report's stamp>-<phase>-<target>.trace.
	File  string `json:"file,omitempty"`
	Bytes int64  `json:"bytes,omitempty"`
	// Why is what made the runner take it, in a line: the missed
	// expectation with its figure, or the pitfall alert firing.
	Why     string    `json:"why"`
	TakenAt time.Time `json:"taken_at"`
	// Repetition is the run's, from 0, when the scenario ran several times.
	Repetition int    `json:"repetition,omitempty"`
	Err        string `json:"error,omitempty"`
}

// Misses are the expectations that run, of phase i and already among its
// runs, misses on what can be held to it now: its own terms, and the
// versus terms whose phase has run (one against a phase still to come
// waits for VerdictsOf). Each is a verdict of this run alone (Target the
// run's, Phase the phase's), marked MISSED.
func Misses(res *Result, i int, run report.Run) []Verdict {
	p := res.Phases[i]
	var out []Verdict
	for _, e := range res.Scenario.Expect {
		if e.SLO == "" || !scenario.Judged(e, res.Quick) || (e.Phase != "" && e.Phase != p.Name) ||
			(e.Target != "" && e.Target != run.Name) {
			continue
		}
		slo, err := boundSLO(e.SLO, p.BoundRPS)
		if err != nil {
			continue // VerdictsOf says ERROR
		}
		_, vss, _ := scenario.SplitVersus(e.SLO) // boundSLO said no error
		vss = slices.DeleteFunc(vss, func(vs scenario.Versus) bool {
			_, ok := sameRepetition(res, i, run, vs.Phase)
			return !ok
		})
		if measured, met := holdRun(res, i, run, slo, vss); !met {
			out = append(out, Verdict{Mark: VerdictMissed, Target: run.Name, Phase: p.Name, Says: e.Says, SLO: e.SLO, Measured: measured})
		}
	}
	return out
}
