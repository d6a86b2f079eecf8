package diagnose

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// WriteJSON writes the findings as {"findings":[...]}, an empty list when
// none fires; pending alerts are not findings and are left out.
func WriteJSON(w io.Writer, r Report) error {
	out := struct {
		Findings []Finding `json:"findings"`
	}{Findings: r.Findings}
	if out.Findings == nil {
		out.Findings = []Finding{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// WriteText writes each finding as a short paragraph: the pitfall, the
// service, since when (and for how long at now), the alert's summary, the
// evidence and the page to read; then the pending alerts, one line each.
// With no finding, one line says so, and why it can be believed: how many
// pitfall rules the Prometheus at source evaluates.
func WriteText(w io.Writer, r Report, source string, now time.Time) {
	if len(r.Findings) == 0 {
		fmt.Fprintf(w, "no pitfall: none of the %d pitfall rules that %s loads fires\n", r.Rules, source)
	}
	for _, f := range r.Findings {
		fmt.Fprintf(w, "%s on %s: firing, its condition holding since %s (%s)\n", f.Pitfall, f.Service,
			f.Since.Format(time.RFC3339), age(f.Since, now))
		if f.Summary != "" {
			fmt.Fprintf(w, "  %s\n", f.Summary)
		}
		if len(f.Evidence) > 0 {
			fmt.Fprintf(w, "  evidence: %s\n", formatEvidence(f.Evidence))
		}
		fmt.Fprintf(w, "  read: %s\n", f.Page)
	}
	for _, f := range r.Pending {
		fmt.Fprintf(w, "pending: %s on %s since %s (%s), not named until it has held as long as its rule's for\n",
			f.Pitfall, f.Service, f.Since.Format(time.RFC3339), age(f.Since, now))
	}
}

// age is how long ago t was, to the second.
func age(t, now time.Time) string {
	d := now.Sub(t).Round(time.Second)
	if d < 0 {
		d = 0 // Prometheus' clock ahead of ours
	}
	return d.String() + " ago"
}

func formatEvidence(es []Evidence) string {
	parts := make([]string, len(es))
	for i, e := range es {
		// As the rule wrote it: name=value unit; a value that is not a
		// finite number is "?"; an item that was not name=value, its text.
		s := e.Signal
		switch {
		case e.Value != nil:
			s += "=" + strconv.FormatFloat(*e.Value, 'g', -1, 64)
		case e.Unit != "":
			s += "=?"
		}
		if e.Unit != "" {
			s += " " + e.Unit
		}
		parts[i] = s
	}
	return strings.Join(parts, "; ")
}
