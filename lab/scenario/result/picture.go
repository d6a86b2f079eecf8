package result

import (
	"fmt"
	"slices"
	"strings"

	"github.com/orderlab/orderlab/lab/scenario"
	"github.com/orderlab/orderlab/loadtest/htmlreport"
)

// Picture is a run's verdict as one chart reads it: per phase and model,
// what it committed per second as a multiple of the phase's bound, its
// success p99 against the target, its answers by status, and the terms of
// its expectations it missed.
type Picture struct {
	Phases []PicturePhase `json:"phases"`
}

// PicturePhase is one HTTP phase of the picture.
type PicturePhase struct {
	Name     string  `json:"name"`
	BoundRPS float64 `json:"bound_rps,omitempty"` // the bound that ran; 0: none
	// Counts is what its models' per-second figure counts: "committed"
	// (orders: the phase posts them) or "succeeded" (successful answers).
	Counts string         `json:"counts"`
	Models []PictureModel `json:"models"`
}

// PictureModel is one model's run in a phase (of a count, the run with the
// median goodput, as the report's charts).
type PictureModel struct {
	Name string `json:"name"`
	// Succeeded is its successful answers per second: its committed
	// orders when the phase Counts "committed".
	Succeeded float64 `json:"succeeded_per_second"`
	// OfBound is Succeeded as a multiple of the phase's bound, and AtLeast
	// the multiple its expectation asks for (0: no bound, no such term).
	OfBound   float64          `json:"of_bound,omitempty"`
	AtLeast   float64          `json:"at_least_of_bound,omitempty"`
	P99       float64          `json:"success_p99_seconds"`
	P99Target float64          `json:"p99_target_seconds,omitempty"` // the expectation's p99 bound, if one holds it
	Status    map[string]int64 `json:"status"`
	// Missed are the terms of its expectations that a run of it missed,
	// as written (goodput>=0.85xbound), as its verdicts count a miss.
	Missed []string `json:"missed,omitempty"`
}

// PictureOf draws res's picture; its phases without HTTP load are left out.
func PictureOf(res *Result) Picture {
	var pic Picture
	for i, p := range res.Phases {
		if p.Loadtest == nil || len(p.Loadtest.Runs) == 0 {
			continue
		}
		pp := PicturePhase{Name: p.Name, BoundRPS: p.BoundRPS, Counts: "succeeded"}
		if i < len(res.Scenario.Phases) && res.Scenario.Phases[i].Request != nil && res.Scenario.Phases[i].Request.Method == "POST" {
			pp.Counts = "committed"
		}
		for _, run := range Representative(p.Loadtest.Runs) {
			m := PictureModel{Name: run.Name, Succeeded: run.Goodput, Status: run.Status}
			if p.BoundRPS > 0 {
				m.OfBound = run.Goodput / p.BoundRPS
			}
			if run.Latency.Success != nil {
				m.P99 = run.Latency.Success.P99
			}
			held(res, i, &m)
			pp.Models = append(pp.Models, m)
		}
		pic.Phases = append(pic.Phases, pp)
	}
	return pic
}

// held fills in what the expectations judged in res hold m to in phase i
// (its floor against the bound, its p99 target) and the terms that any of
// its runs there missed.
func held(res *Result, i int, m *PictureModel) {
	p := res.Phases[i]
	for _, e := range res.Scenario.Expect {
		if !scenario.Judged(e, res.Quick) || e.SLO == "" || (e.Target != "" && e.Target != m.Name) || (e.Phase != "" && e.Phase != p.Name) {
			continue
		}
		slo, err := boundSLO(e.SLO, p.BoundRPS)
		if err != nil {
			continue // its verdict says ERROR
		}
		for _, b := range slo {
			switch {
			case b.Metric == "p99" && strings.HasPrefix(b.Op, "<"):
				m.P99Target = b.Value
			case b.Metric == "goodput" && strings.HasPrefix(b.Op, ">") && p.BoundRPS > 0:
				m.AtLeast = b.Value / p.BoundRPS
			}
		}
		for _, run := range p.Loadtest.Runs {
			if run.Name != m.Name {
				continue
			}
			for j, ev := range slo.Evaluate(run) {
				if !ev.Met && !slices.Contains(m.Missed, slo[j].Text) {
					m.Missed = append(m.Missed, slo[j].Text)
				}
			}
		}
	}
}

// PictureDrawing is pic as the report and the front page draw it
// (htmlreport.VerdictDrawing): a row per model and phase, each model in its
// colour.
func PictureDrawing(pic Picture) htmlreport.Drawing {
	return htmlreport.VerdictDrawing(PictureRows(pic))
}

// PictureRows are the rows of pic, as PictureDrawing draws them.
func PictureRows(pic Picture) []htmlreport.Row {
	var rows []htmlreport.Row
	colors := map[string]int{}
	for _, ph := range pic.Phases {
		for _, m := range ph.Models {
			if _, ok := colors[m.Name]; !ok {
				colors[m.Name] = len(colors)
			}
			r := htmlreport.Row{Label: m.Name, Color: colors[m.Name], Counts: ph.Counts, PerSecond: m.Succeeded, Bound: ph.BoundRPS,
				AtLeast: m.AtLeast, P99: m.P99, P99Target: m.P99Target, Status: m.Status}
			if len(pic.Phases) > 1 {
				r.Label += ", " + ph.Name
			}
			for _, term := range m.Missed {
				metric := term
				if k := strings.IndexAny(term, "<>"); k > 0 {
					metric = strings.TrimSpace(term[:k])
				}
				switch metric {
				case "goodput":
					r.MissedRate = true
				case "p99":
					r.MissedP99 = true
				default:
					r.MissedOther = true
				}
			}
			rows = append(rows, r)
		}
	}
	return rows
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
