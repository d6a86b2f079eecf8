package composelab

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/orderlab/orderlab/lab/diagnose"
)

// renderDiagnosis writes the Markdown of a diagnosis report: every figure
// in it is read from r, so that the committed Markdown can be held to its
// JSON.
func renderDiagnosis(r diagnosisReport) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("# Which pitfall the alerts name, in the compose lab\n\n")
	p("`%s`, started %s UTC, %.0f min, on a 2-core machine with a 1-minute load average of %.1f at the start and %.1f at the end. ",
		r.Command, r.StartedAt.UTC().Format("2006-01-02 15:04"), r.Elapsed/60, r.LoadAverage[0], r.LoadAverage[1])
	which := "each model where the catalog says it shows"
	if r.Settings.Models == "one" {
		which = "one model where the catalog says it shows (the three taken in turn)"
	}
	p("Each pitfall ran on %s, after background load alone on that model, "+
		"with its phase's load for %.0f s; the pitfall alerts of `prometheus/rules/pitfalls.yml` were read every %.0f s through `lab diagnose`'s "+
		"client (%d asks, %d failed). A pitfall run's window lasts from its command's start to %.0f s after its phase; "+
		"an alert belongs to the window it became active in. Target: each pitfall named within %.0f s of its phase's start, "+
		"no other pitfall named on that model, and no pitfall named under background load alone or a busy healthy load.\n\n",
		which, r.Settings.PhaseSeconds, r.PollSeconds, r.Polls, r.PollErrors, r.Settings.TailSeconds, r.Settings.TargetSeconds)

	p("## Confusion matrix\n\nRows: the pitfall that ran; columns: the pitfalls named (firing) on the model it ran on, " +
		"or none; a cell lists those models (U unbounded, S semaphore, P pipeline).\n\n")
	p("| ran | %s | none |\n|---|%s---|\n", strings.Join(r.Pitfalls, " | "), strings.Repeat("---|", len(r.Pitfalls)))
	for _, pf := range ranPitfalls(r) {
		cells := make([]string, len(r.Pitfalls)+1)
		for _, s := range r.Runs {
			if s.Pitfall != pf {
				continue
			}
			named := s.named()
			if len(named) == 0 {
				cells[len(r.Pitfalls)] += initial(s.Model)
			}
			for _, n := range named {
				if i := slices.Index(r.Pitfalls, n); i >= 0 {
					cells[i] += initial(s.Model)
				}
			}
		}
		p("| %s | %s |\n", pf, strings.Join(cells, " | "))
	}

	p("\n## Time to detect\n\nFrom the phase's start (the runner's report) to the first ask that found the pitfall firing " +
		"on the model it ran on; · where the catalog says it does not show.\n\n| pitfall | unbounded | semaphore | pipeline |\n|---|---:|---:|---:|\n")
	for _, pf := range ranPitfalls(r) {
		cells := []string{"·", "·", "·"}
		for _, s := range r.Runs {
			if i := slices.Index(modelNames, s.Model); s.Pitfall == pf && i >= 0 {
				cells[i] = detectCell(s)
			}
		}
		p("| %s | %s |\n", pf, strings.Join(cells, " | "))
	}

	p("\n## Pitfall runs\n\n| pitfall | model | phase | started (UTC) | verdict | named, s after the phase's start |\n|---|---|---|---|---|---|\n")
	for _, s := range r.Runs {
		p("| %s | %s | %s | %s | %s | %s |\n", s.Pitfall, s.Model, s.Phase, s.PhaseStart.UTC().Format("15:04:05"), s.verdict(), namedCell(s))
	}

	for _, s := range r.Runs {
		if s.Failed != "" {
			p("\n%s on %s did not run to its end: %s\n", s.Pitfall, s.Model, s.Failed)
		}
	}

	p("\n## False alarms\n\nPitfall alerts firing under background load alone (calm: a service's time outside every pitfall run's "+
		"window, the lab not being recreated) and under a busy healthy load (busy: %s).\n\n| window | service | observed | pitfall alerts firing |\n|---|---|---:|---:|\n",
		busyNote(r))
	for _, kind := range []string{"calm", "busy"} {
		for _, m := range modelNames {
			var d time.Duration
			for _, w := range r.Windows {
				if w.Kind == kind && w.Service == m {
					d += w.To.Sub(w.From)
				}
			}
			n := 0
			for _, a := range r.falseAlarms() {
				if a.During == kind && a.Service == m {
					n++
				}
			}
			p("| %s | %s | %.1f min | %d |\n", kind, m, d.Minutes(), n)
		}
	}
	if n := len(alertsDuring(r, "none")); n > 0 {
		p("\n%d fired in no window at all.\n", n)
	}
	if fa := r.falseAlarms(); len(fa) > 0 {
		p("\n| pitfall | service | window | active at (UTC) | evidence |\n|---|---|---|---|---|\n")
		for _, a := range fa {
			p("| %s | %s | %s | %s | %s |\n", a.Pitfall, a.Service, a.During, a.ActiveAt.UTC().Format("15:04:05"), evidenceText(a.Evidence))
		}
	}
	if settle := alertsDuring(r, "settle"); len(settle) > 0 {
		p("\nWhile the lab was recreated (the database proxy in, Postgres restarted with another limit), not counted: %s.\n", strings.Join(settle, "; "))
	}

	if slices.ContainsFunc(r.Runs, func(s pitfallRun) bool { return s.Unproven != "" }) {
		p("\n## Not held to the diagonal\n\nPitfall runs the test does not hold to the target: the pitfall did not reach the model, " +
			"or the signals that exist do not name it there.\n\n")
		for _, s := range r.Runs {
			if s.Unproven != "" {
				p("- **%s on %s**: %s Seen: %s.\n", s.Pitfall, s.Model, s.Unproven, seenText(s))
			}
		}
	}

	p("\n## Where the catalog says each shows\n\n")
	for _, s := range r.Runs {
		p("- %s on %s (%s, phase %s): %s %s\n", s.Pitfall, s.Model, s.Scenario, s.Phase, s.How, strings.TrimSpace(s.CatalogSays))
		if len(s.AlsoRan) > 0 {
			p("  Also ran, so not counted as misnamed: %s (%s)\n", strings.Join(s.AlsoRan, ", "), s.AlsoWhy)
		}
	}
	return b.String()
}

// ranPitfalls are the pitfalls that ran, in the order of r.Pitfalls
// (the catalog's).
func ranPitfalls(r diagnosisReport) []string {
	var out []string
	for _, s := range r.Runs {
		if !slices.Contains(out, s.Pitfall) {
			out = append(out, s.Pitfall)
		}
	}
	rank := func(p string) int {
		if i := slices.Index(r.Pitfalls, p); i >= 0 {
			return i
		}
		return len(r.Pitfalls)
	}
	slices.SortStableFunc(out, func(a, b string) int { return rank(a) - rank(b) })
	return out
}

func initial(model string) string {
	return map[string]string{"unbounded": "U", "semaphore": "S", "pipeline": "P"}[model]
}

func secs(d time.Duration) string { return fmt.Sprintf("%.0f s", d.Seconds()) }

func detectCell(s pitfallRun) string {
	d, ok := s.detected()
	switch {
	case !ok:
		return "not named"
	case d > detectWithin:
		return secs(d) + " (late)"
	}
	return secs(d)
}

// namedCell lists every pitfall seen on the pitfall run's services, with when
// it fired (or "pending" when it never did).
func namedCell(s pitfallRun) string {
	var parts []string
	for _, a := range s.Alerts {
		when := "pending only"
		if a.Firing != nil {
			when = secs(a.Firing.Sub(s.PhaseStart))
		}
		on := ""
		if a.Service != s.Model {
			on = " on " + a.Service
		}
		parts = append(parts, fmt.Sprintf("%s%s %s", a.Pitfall, on, when))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "; ")
}

func seenText(s pitfallRun) string {
	var parts []string
	for _, a := range s.Alerts {
		if a.Service == s.Model {
			parts = append(parts, a.Pitfall+" ("+evidenceText(a.Evidence)+")")
		}
	}
	if len(parts) == 0 {
		return "no pitfall alert"
	}
	return strings.Join(parts, "; ")
}

func evidenceText(ev []diagnose.Evidence) string {
	var parts []string
	for _, e := range ev {
		if e.Value == nil {
			parts = append(parts, e.Signal)
			continue
		}
		parts = append(parts, fmt.Sprintf("%s=%.3g %s", e.Signal, *e.Value, e.Unit))
	}
	return strings.Join(parts, ", ")
}

func alertsDuring(r diagnosisReport, kind string) []string {
	var out []string
	for _, a := range r.Alerts {
		if a.During == kind && a.Firing != nil {
			out = append(out, fmt.Sprintf("%s on %s at %s", a.Pitfall, a.Service, a.ActiveAt.UTC().Format("15:04:05")))
		}
	}
	return out
}

func busyNote(r diagnosisReport) string {
	for _, w := range r.Windows {
		if w.Kind == "busy" && w.Note != "" {
			return w.Note
		}
	}
	return "none run"
}
