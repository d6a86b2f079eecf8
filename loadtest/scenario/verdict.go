package scenario

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/orderlab/orderlab/loadtest/report"
)

// Verdicts are one line per expectation of the scenario: MET or MISSED with
// the measured figure of every run it applies to, or, for an expectation
// that claims no number, that the table must be read.
func Verdicts(res *Result) []string {
	var out []string
	for _, e := range res.Scenario.Expect {
		who := cmp.Or(e.Target, "all")
		if e.Phase != "" {
			who += ", " + e.Phase
		}
		if e.SLO == "" {
			out = append(out, fmt.Sprintf("READ   %s: %s (no figure to check: see the table)", who, e.Says))
			continue
		}
		slo, err := report.ParseSLO(e.SLO)
		if err != nil {
			out = append(out, fmt.Sprintf("ERROR  %s: %s: %v", who, e.SLO, err))
			continue
		}
		met, seen := true, []string{}
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
					seen = append(seen, fmt.Sprintf("%s %s %s", p.Name, run.Name, ev.Actual))
				}
			}
		}
		mark := "MET   "
		switch {
		case len(seen) == 0:
			mark, seen = "NO RUN", []string{"nothing measured"}
		case !met:
			mark = "MISSED"
		}
		out = append(out, fmt.Sprintf("%s %s: %s: %s (%s)", mark, who, e.SLO, e.Says, strings.Join(seen, "; ")))
	}
	return out
}
