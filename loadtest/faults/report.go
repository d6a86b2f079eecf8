package faults

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

// OK says whether the table backed every answer and nothing failed with a
// 500 or a transport error.
func (r Result) OK() bool {
	return r.Missing+r.Duplicates+r.Stored == 0 && r.Answers["500"] == 0 && r.Answers["transport error"] == 0
}

// WriteMarkdown writes one table per fault, a row per service: the README's
// reliability tables.
func WriteMarkdown(w io.Writer, rs []Result, faults []Fault, cfg Config) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%d keyed orders/s (a unique Idempotency-Key each); the fault after %s of load, %s more after it ends.\n",
		cfg.Rate, cfg.Before, cfg.After)
	for _, f := range faults {
		fmt.Fprintf(&b, "\n#### %s\n\n%s.\n\n", f.Name, f.What)
		b.WriteString("| service | orders | answers | full success again after the fault ended | acknowledged but missing | stored twice | answered not stored but stored |\n")
		b.WriteString("|---|---:|---|---:|---:|---:|---:|\n")
		for _, r := range rs {
			if r.Fault != f.Name {
				continue
			}
			fmt.Fprintf(&b, "| %s | %d | %s | %s | %d | %d | %d |\n",
				r.Service, r.Sent, answers(r.Answers), recovery(r), r.Missing, r.Duplicates, r.Stored)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// answers lists the answers by label, successes first: "201: 1,180; 503 database-unavailable: 120".
func answers(m map[string]int) string {
	labels := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(labels))
	for i, l := range labels {
		parts[i] = fmt.Sprintf("%s: %d", l, m[l])
	}
	return strings.Join(parts, "; ")
}

func recovery(r Result) string {
	switch {
	case r.Failed == 0:
		return "no failed answer"
	case r.Recovery == 0:
		return "at once"
	}
	return r.Recovery.Round(10 * time.Millisecond).String()
}
