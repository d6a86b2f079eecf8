package diagnose

import (
	"math"
	"strconv"
	"strings"
)

// Evidence is one signal a pitfall alert quotes: its name, its value when
// the alert wrote one that reads as a number, and its unit ("s", "count",
// "ratio", "bytes"; empty when the alert gave none).
type Evidence struct {
	Signal string   `json:"signal"`
	Value  *float64 `json:"value,omitempty"`
	Unit   string   `json:"unit"`
}

// siPrefixes are the suffixes Prometheus' humanize template function puts
// on a number ("1.2k", "250m"): a rule that humanizes its values still
// reads back as numbers.
var siPrefixes = map[string]float64{
	"y": 1e-24, "z": 1e-21, "a": 1e-18, "f": 1e-15, "p": 1e-12, "n": 1e-9, "µ": 1e-6, "u": 1e-6, "m": 1e-3,
	"k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18, "Z": 1e21, "Y": 1e24,
}

// ParseEvidence reads an alert's evidence annotation, "signal=VALUE UNIT;
// signal=VALUE UNIT" (the pitfall rules' contract, docs/diagnose.md). It
// never fails: an item that is not "name=number [unit]" becomes a signal
// named by its whole text, with no value, so that whatever the rule wrote
// is still shown; a value that is not finite (NaN, +Inf) leaves the value
// out and keeps the name and unit. Empty items are skipped.
func ParseEvidence(s string) []Evidence {
	out := []Evidence{}
	for item := range strings.SplitSeq(s, ";") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		out = append(out, parseItem(item))
	}
	return out
}

func parseItem(item string) Evidence {
	name, rest, ok := strings.Cut(item, "=")
	name = strings.TrimSpace(name)
	fields := strings.Fields(rest)
	if !ok || name == "" || strings.ContainsAny(name, " \t") || len(fields) == 0 {
		return Evidence{Signal: item}
	}
	v, ok := parseNumber(fields[0])
	if !ok {
		return Evidence{Signal: item}
	}
	e := Evidence{Signal: name, Unit: strings.Join(fields[1:], " ")}
	if !math.IsNaN(v) && !math.IsInf(v, 0) {
		e.Value = &v
	}
	return e
}

// parseNumber reads a Go float, or one with a humanize SI suffix.
func parseNumber(s string) (float64, bool) {
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		return v, true
	}
	for suffix, scale := range siPrefixes {
		if num, ok := strings.CutSuffix(s, suffix); ok && num != "" {
			if v, err := strconv.ParseFloat(num, 64); err == nil && !math.IsNaN(v) && !math.IsInf(v, 0) {
				return v * scale, true
			}
		}
	}
	return 0, false
}
