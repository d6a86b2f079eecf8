package scenario

import (
	"fmt"
	"slices"
	"strings"

	"github.com/orderlab/orderlab/loadtest/chart"
)

// Picture is a run's verdict as one chart reads it: per phase and model,
// what it committed against the bound, its success p99 against the
// target, and its answers by status.
type Picture struct {
	Phases []PicturePhase `json:"phases"`
}

// PicturePhase is one HTTP phase of the picture.
type PicturePhase struct {
	Name     string         `json:"name"`
	BoundRPS float64        `json:"bound_rps,omitempty"` // the bound that ran; 0: none
	Models   []PictureModel `json:"models"`
}

// PictureModel is one model's run in a phase (the median run of a count).
type PictureModel struct {
	Name string `json:"name"`
	// Succeeded is the successful answers per second: committed orders
	// for POST /orders.
	Succeeded float64          `json:"succeeded_per_second"`
	P99       float64          `json:"success_p99_seconds"`
	P99Target float64          `json:"p99_target_seconds,omitempty"` // the expectation's p99 bound, if one holds it
	Status    map[string]int64 `json:"status"`
}

// PictureOf draws res's picture; its phases without HTTP load are left out.
func PictureOf(res *Result) Picture {
	var pic Picture
	for i, p := range res.Phases {
		if p.Loadtest == nil || len(p.Loadtest.Runs) == 0 {
			continue
		}
		pp := PicturePhase{Name: p.Name, BoundRPS: p.BoundRPS}
		for _, run := range p.Loadtest.Runs {
			if slices.ContainsFunc(pp.Models, func(m PictureModel) bool { return m.Name == run.Name }) {
				continue // a count's later runs: the first stands for the model
			}
			m := PictureModel{Name: run.Name, Succeeded: run.Goodput, Status: run.Status}
			if run.Latency.Success != nil {
				m.P99 = run.Latency.Success.P99
			}
			m.P99Target = p99Target(res, i, run.Name)
			pp.Models = append(pp.Models, m)
		}
		pic.Phases = append(pic.Phases, pp)
	}
	return pic
}

// p99Target is the p99 bound an expectation judged in res holds model to
// in phase i, 0 when none does.
func p99Target(res *Result, i int, model string) float64 {
	name := res.Phases[i].Name
	for _, e := range res.Scenario.Expect {
		if !judged(e, res.Quick) || (e.Target != "" && e.Target != model) || (e.Phase != "" && e.Phase != name) {
			continue
		}
		slo, err := boundSLO(e.SLO, max(res.Phases[i].BoundRPS, 1))
		if err != nil {
			continue
		}
		for _, b := range slo {
			if b.Metric == "p99" && strings.HasPrefix(b.Op, "<") {
				return b.Value
			}
		}
	}
	return 0
}

// Conclusion is the run's verdicts in one sentence.
func Conclusion(res *Result) string {
	var met, missed, notJudged, other int
	for _, v := range VerdictsOf(res) {
		switch v.Mark {
		case VerdictMet:
			met++
		case VerdictMissed:
			missed++
		case VerdictNotJudged:
			notJudged++
		case VerdictNoRun, VerdictError:
			other++
		}
	}
	tail := ""
	if notJudged > 0 {
		tail = fmt.Sprintf(" (%d not judged at quick size)", notJudged)
	}
	switch {
	case met+missed == 0:
		return "Nothing here is held to a figure" + tail + ": read the tables against what each expectation says."
	case missed == 0 && other == 0 && met == 1:
		return "The lesson holds: its expectation with a figure was met" + tail + "."
	case missed == 0 && other == 0:
		return fmt.Sprintf("The lesson holds: all %d expectations with a figure were met%s.", met, tail)
	}
	return fmt.Sprintf("The lesson did not show in full: %d of %d expectations with a figure were missed%s; "+
		"a busy machine slows every model, so read the figures before the verdicts.", missed+other, met+missed+other, tail)
}

// verdictSection heads the HTML report with the run's picture: successes
// per second per model and phase against the bound, success p99 against
// its target, the conclusion and the verdicts in words.
func verdictSection(b *chart.Builder, res *Result) (chart.Section, bool) {
	pic := PictureOf(res)
	if len(pic.Phases) == 0 || len(res.Scenario.Expect) == 0 {
		return chart.Section{}, false
	}
	var labels []string
	var ok, bound, p99, target []float64
	for _, ph := range pic.Phases {
		for _, m := range ph.Models {
			label := m.Name
			if len(pic.Phases) > 1 {
				label += ", " + ph.Name
			}
			labels = append(labels, label)
			ok, bound = append(ok, m.Succeeded), append(bound, ph.BoundRPS)
			p99, target = append(p99, 1000*m.P99), append(target, 1000*m.P99Target)
		}
	}
	sec := chart.Section{Title: "Verdict", Notes: []string{Conclusion(res)}}
	for _, v := range VerdictsOf(res) {
		sec.Notes = append(sec.Notes, v.String())
	}
	sec.Charts = append(sec.Charts, b.BarsAgainst("Successes per second (orders: committed) vs the bound", "/s", labels, ok, "bound", bound))
	if slices.Max(p99) > 0 {
		sec.Charts = append(sec.Charts, b.BarsAgainst("Success p99 vs its target", "ms", labels, p99, "target", target))
	}
	return sec, true
}
