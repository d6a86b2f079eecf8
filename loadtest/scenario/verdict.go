package scenario

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/orderlab/orderlab/loadtest/report"
)

// Verdict words: what became of one expectation.
const (
	VerdictMet    = "MET"    // every run it applies to met its SLO
	VerdictMissed = "MISSED" // at least one run missed it
	VerdictRead   = "READ"   // it claims no figure: the table must be read
	VerdictNoRun  = "NO RUN" // nothing it applies to was measured
	VerdictError  = "ERROR"  // its SLO does not parse
)

// Verdict is one expectation of a scenario held to the runs it applies to.
type Verdict struct {
	Mark   string `json:"mark"`   // one of the Verdict words
	Target string `json:"target"` // a service, or "all"
	Phase  string `json:"phase,omitempty"`
	Says   string `json:"says"`          // the expectation in words
	SLO    string `json:"slo,omitempty"` // what it claims, e.g. p99<500ms
	// Measured is, for each run it applies to, "phase target figure", or
	// why there is nothing to compare.
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
	case VerdictError:
		return fmt.Sprintf("ERROR  %s: %s: %s", who, v.SLO, strings.Join(v.Measured, "; "))
	}
	return fmt.Sprintf("%-6s %s: %s: %s (%s)", v.Mark, who, v.SLO, v.Says, strings.Join(v.Measured, "; "))
}

// VerdictsOf holds each expectation of the scenario to the runs it applies
// to: MET or MISSED with the measured figure of every such run, READ for an
// expectation that claims no number.
func VerdictsOf(res *Result) []Verdict {
	var out []Verdict
	for _, e := range res.Scenario.Expect {
		v := Verdict{Target: cmp.Or(e.Target, "all"), Phase: e.Phase, Says: e.Says, SLO: e.SLO}
		if e.SLO == "" {
			v.Mark = VerdictRead
			out = append(out, v)
			continue
		}
		slo, err := report.ParseSLO(e.SLO)
		if err != nil {
			v.Mark, v.Measured = VerdictError, []string{err.Error()}
			out = append(out, v)
			continue
		}
		met := true
		for _, p := range res.Phases {
			if p.Loadtest == nil || (e.Phase != "" && e.Phase != p.Name) {
				continue
			}
			for _, run := range p.Loadtest.Runs {
				if e.Target != "" && run.Name != e.Target {
					continue
				}
				for _, ev := range slo.Evaluate(run) {
					met = met && ev.Met
					v.Measured = append(v.Measured, fmt.Sprintf("%s %s %s", p.Name, run.Name, ev.Actual))
				}
			}
		}
		switch {
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

// Verdicts are VerdictsOf's verdicts one line each.
func Verdicts(res *Result) []string {
	var out []string
	for _, v := range VerdictsOf(res) {
		out = append(out, v.String())
	}
	return out
}
