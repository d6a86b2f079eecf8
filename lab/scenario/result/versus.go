package result

import (
	"fmt"

	"github.com/orderlab/orderlab/lab/scenario"
	"github.com/orderlab/orderlab/loadtest/report"
)

// figureWords is a run's figure for one of the versus metrics, in words
// named for what it counts: "committed 395/s", "sent 1.02 attempts per
// request (retry amplification)", "'s server counted 210 rejections/s".
// The words follow the run's name.
func figureWords(metric string, v float64, ph measuredPhase) string {
	switch metric {
	case "goodput":
		return fmt.Sprintf(" %s %s/s", ph.successVerb(), rate(v))
	case "rps":
		return fmt.Sprintf(" answered %s/s (rejections included)", rate(v))
	case "amplification":
		return fmt.Sprintf(" sent %.2f attempts per request (retry amplification)", v)
	case "server_rejections":
		return fmt.Sprintf("'s server counted %s rejections/s", rate(v))
	}
	return fmt.Sprintf(" %s %g", metric, v)
}

// versusInWords holds run, of phase i, to the same target's run of the
// same repetition in the phase vs names, and says so in words: "semaphore
// committed 395/s = 1.01 × its 391/s in open-honor; target ≥ 1 ×: met".
// False when the term is missed or there is nothing to compare.
func versusInWords(res *Result, i int, run report.Run, ph measuredPhase, vs scenario.Versus) (string, bool) {
	ref, ok := sameRepetition(res, i, run, vs.Phase)
	if !ok {
		return fmt.Sprintf("%s: no run of %s in %s to compare with", vs.Text, run.Name, vs.Phase), false
	}
	got, shown, ok := report.Figure(vs.Metric, run)
	if !ok {
		return fmt.Sprintf("%s: %s has %s", vs.Text, run.Name, shown), false
	}
	want, shown, ok := report.Figure(vs.Metric, ref)
	if !ok || want == 0 {
		return fmt.Sprintf("%s: %s has %s in %s", vs.Text, run.Name, shown, vs.Phase), false
	}
	bound := report.SLO{{Metric: vs.Metric, Op: vs.Op, Value: vs.Share * want, Text: vs.Text}}
	met := bound.Evaluate(run)[0].Met
	its := rate(want) + "/s"
	if vs.Metric == "amplification" {
		its = fmt.Sprintf("%.2f", want)
	}
	return fmt.Sprintf("%s%s = %.2f × its %s in %s; target %s %g ×: %s", run.Name, figureWords(vs.Metric, got, ph),
		got/want, its, vs.Phase, ops[vs.Op], vs.Share,
		map[bool]string{true: "met", false: "missed"}[met]), met
}

// sameRepetition is run's counterpart in the phase named: the same
// target's run of the same repetition (the k-th of its runs there, as run
// is the k-th of its runs in phase i).
func sameRepetition(res *Result, i int, run report.Run, phase string) (report.Run, bool) {
	k := -1
	for _, r := range res.Phases[i].Loadtest.Runs {
		if r.Name == run.Name {
			k++
			if r.StartedAt.Equal(run.StartedAt) {
				break
			}
		}
	}
	for _, p := range res.Phases {
		if p.Name != phase || p.Loadtest == nil {
			continue
		}
		for _, r := range p.Loadtest.Runs {
			if r.Name == run.Name {
				if k == 0 {
					return r, true
				}
				k--
			}
		}
	}
	return report.Run{}, false
}
