package result

import (
	"cmp"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/orderlab/orderlab/lab/scenario"
	"github.com/orderlab/orderlab/loadtest/report"
)

// Verdict words: what became of one expectation.
const (
	VerdictMet    = "MET"    // every run it applies to met its SLO
	VerdictMissed = "MISSED" // at least one run missed it
	VerdictRead   = "READ"   // it claims no figure: the table must be read
	VerdictNoRun  = "NO RUN" // nothing it applies to was measured
	VerdictError  = "ERROR"  // its SLO does not parse
	// VerdictNotJudged: a quick run cannot show it (not_quick).
	VerdictNotJudged = "NOT JUDGED"
)

// notJudged is what a quick run says of an expectation it cannot show.
const notJudged = "not judged at quick size"

// Verdict is one expectation of a scenario held to the runs it applies to.
type Verdict struct {
	Mark   string `json:"mark"`   // one of the Verdict words
	Target string `json:"target"` // a service, or "all"
	Phase  string `json:"phase,omitempty"`
	Says   string `json:"says"`          // the expectation in words
	SLO    string `json:"slo,omitempty"` // what it claims, e.g. p99<500ms
	// Measured is, for each run it applies to and each term of the SLO, a
	// line in words with units: "orders: semaphore committed 361/s = 90 %
	// of the 400/s bound; target ≥ 85 %: met"; or why there is nothing to
	// compare.
	Measured []string `json:"measured,omitempty"`
}

// String is the verdict in a line, as the CLI and the Markdown print it.
func (v Verdict) String() string {
	who := v.Target
	if v.Phase != "" {
		who += ", " + v.Phase
	}
	switch v.Mark {
	case VerdictRead:
		return fmt.Sprintf("READ   %s: %s (no figure to check: see the table)", who, v.Says)
	case VerdictNotJudged:
		return fmt.Sprintf("NOT JUDGED %s: %s (%s)", who, v.Says, notJudged)
	case VerdictError:
		return fmt.Sprintf("ERROR  %s: %s: %s", who, v.SLO, strings.Join(v.Measured, "; "))
	}
	return fmt.Sprintf("%-6s %s: %s: %s (%s)", v.Mark, who, v.SLO, v.Says, strings.Join(v.Measured, "; "))
}

// VerdictsOf holds each expectation of the scenario to the runs it applies
// to: MET or MISSED with the measured figure of every such run, READ for an
// expectation that claims no number, NOT JUDGED for one a quick run cannot
// show. An SLO stated against the bound is held to the bound of the phase
// as it ran.
func VerdictsOf(res *Result) []Verdict {
	var out []Verdict
	for _, e := range res.Scenario.Expect {
		v := Verdict{Target: cmp.Or(e.Target, "all"), Phase: e.Phase, Says: e.Says, SLO: e.SLO}
		switch {
		case !scenario.Judged(e, res.Quick):
			v.Mark, v.Measured = VerdictNotJudged, []string{notJudged}
			out = append(out, v)
			continue
		case e.SLO == "":
			v.Mark = VerdictRead
			out = append(out, v)
			continue
		}
		met, bad := true, false
		for i, p := range res.Phases {
			if p.Loadtest == nil || (e.Phase != "" && e.Phase != p.Name) {
				continue
			}
			slo, err := boundSLO(e.SLO, p.BoundRPS)
			if err != nil {
				v.Measured, bad = append(v.Measured, err.Error()), true
				continue
			}
			_, vss, _ := scenario.SplitVersus(e.SLO) // boundSLO said no error
			for _, run := range p.Loadtest.Runs {
				if e.Target != "" && run.Name != e.Target {
					continue
				}
				measured, ok := holdRun(res, i, run, slo, vss)
				met = met && ok
				v.Measured = append(v.Measured, measured...)
			}
		}
		switch {
		case bad:
			v.Mark = VerdictError
		case len(v.Measured) == 0:
			v.Mark, v.Measured = VerdictNoRun, []string{"nothing measured"}
		case !met:
			v.Mark = VerdictMissed
		default:
			v.Mark = VerdictMet
		}
		out = append(out, v)
	}
	return out
}

// holdRun holds run, of phase i, to an expectation's own terms (slo) and
// its versus terms (vss): a line in words for each, prefixed with the
// phase's name, and whether every one was met.
func holdRun(res *Result, i int, run report.Run, slo report.SLO, vss []scenario.Versus) (measured []string, met bool) {
	name, ph, met := res.Phases[i].Name, phaseOf(res, i), true
	for j, ev := range slo.Evaluate(run) {
		met = met && ev.Met
		measured = append(measured, name+": "+inWords(run, ph, slo[j], ev))
	}
	for _, vs := range vss {
		words, ok := versusInWords(res, i, run, ph, vs)
		met = met && ok
		measured = append(measured, name+": "+words)
	}
	return measured, met
}

// boundSLO parses slo with its terms stated against the bound resolved
// with boundRPS; each parsed term keeps the text as written.
func boundSLO(text string, boundRPS float64) (report.SLO, error) {
	resolved, err := scenario.ResolveSLO(text, boundRPS)
	if err != nil {
		return nil, err
	}
	slo, err := report.ParseSLO(resolved)
	if err != nil {
		return nil, err
	}
	own, _, err := scenario.SplitVersus(text)
	if err != nil {
		return nil, err
	}
	var written []string
	for _, term := range strings.Split(own, ",") {
		if term = strings.TrimSpace(term); term != "" {
			written = append(written, term)
		}
	}
	for i := range slo {
		slo[i].Text = written[i]
	}
	return slo, nil
}

// ops are the comparison signs as a reader writes them.
var ops = map[string]string{"<": "<", "<=": "≤", ">": ">", ">=": "≥"}

// measuredPhase is what the words of a verdict need to know of the phase
// a run belongs to.
type measuredPhase struct {
	committed bool          // its requests place orders: a success is a commit
	boundRPS  float64       // its Little's-law bound as it ran; 0: none
	hold      time.Duration // the bound's nominal hold; 0: no bound
}

// phaseOf is phase i of res as the verdicts read it.
func phaseOf(res *Result, i int) measuredPhase {
	ph := measuredPhase{boundRPS: res.Phases[i].BoundRPS}
	if i < len(res.Scenario.Phases) {
		sp := res.Scenario.Phases[i]
		ph.committed = sp.Request != nil && sp.Request.Method == "POST"
		if sp.Bound != nil {
			ph.hold = sp.Bound.Hold.D()
		}
	}
	return ph
}

// successVerb is what a success of the phase did: committed (an order) or
// succeeded.
func (ph measuredPhase) successVerb() string {
	if ph.committed {
		return "committed"
	}
	return "succeeded"
}

// inWords is one term of an SLO held to one run, in words with units:
// "semaphore committed 361/s = 90 % of the 400/s bound; target ≥ 85 %:
// met". An rps term says that its answers include the rejections.
func inWords(run report.Run, ph measuredPhase, b report.Bound, ev report.Evaluation) string {
	mark := map[bool]string{true: "met", false: "missed"}[ev.Met]
	op := ops[b.Op]
	share, relativeTerm, _ := scenario.Relative(b.Text)
	boundRPS := ph.boundRPS
	switch b.Metric {
	case "pooluse":
		return poolUseInWords(run, ph, b, ev)
	case "starved":
		return starvedInWords(run, b, ev)
	case "rps", "goodput":
		// figure is the rate with what it counts: "committed 361/s",
		// "answered 1,200/s (rejections included)".
		figure := fmt.Sprintf("answered %s/s (rejections included)", rate(run.Throughput))
		got := run.Throughput
		if b.Metric == "goodput" {
			got = run.Goodput
			figure = fmt.Sprintf("%s %s/s", ph.successVerb(), rate(got))
		}
		if !relativeTerm {
			return fmt.Sprintf("%s %s; target %s %s/s: %s", run.Name, figure, op, rate(b.Value), mark)
		}
		if share < 1 {
			return fmt.Sprintf("%s %s = %.0f %% of the %s/s bound; target %s %.0f %%: %s",
				run.Name, figure, 100*got/boundRPS, rate(boundRPS), op, 100*share, mark)
		}
		return fmt.Sprintf("%s %s = %.1f × the %s/s bound; target %s %g ×: %s",
			run.Name, figure, got/boundRPS, rate(boundRPS), op, share, mark)
	case "amplification", "server_rejections":
		got, _, _ := report.Figure(b.Metric, run)
		if b.Metric == "server_rejections" && (run.Server == nil || run.Server.Scrapes == 0) {
			return fmt.Sprintf("%s: no server metrics; target %s %s/s: %s", run.Name, op, rate(b.Value), mark)
		}
		target := fmt.Sprintf("%g", b.Value)
		if b.Metric == "server_rejections" {
			target = rate(b.Value) + "/s"
		}
		return fmt.Sprintf("%s%s; target %s %s: %s", run.Name, figureWords(b.Metric, got, ph), op, target, mark)
	case "errors", "rejections":
		got := run.ErrorRate
		if b.Metric == "rejections" {
			got = run.RejectionRate
		}
		return fmt.Sprintf("%s %s %s; target %s %s: %s", run.Name, b.Metric, spacedPercent(got), op, spacedPercent(b.Value), mark)
	}
	return fmt.Sprintf("%s success %s %s; target %s %s: %s", run.Name, b.Metric, ev.Actual, op, report.FormatSeconds(b.Value), mark)
}

// spacedPercent writes a share as a percentage, a space before the sign:
// "0.3 %".
func spacedPercent(v float64) string { return strings.Replace(report.FormatPercent(v), "%", " %", 1) }

// rate writes a rate per second: 361, 12.5, 2,078.
func rate(v float64) string {
	if v < 100 && v != math.Trunc(v) {
		return fmt.Sprintf("%.1f", v)
	}
	return scenario.FormatFigure(math.Round(v))
}

// Verdicts are VerdictsOf's verdicts one line each.
func Verdicts(res *Result) []string {
	var out []string
	for _, v := range VerdictsOf(res) {
		out = append(out, v.String())
	}
	return out
}
