package scenario

import (
	"fmt"
	"strconv"
	"strings"
)

// xbound ends an SLO value stated against the phase's own bound:
// goodput>=0.85xbound is at least 85 % of the bound, rps>=5xbound five
// times it. The runner puts the bound of the knobs that ran (a quick run's
// smaller pool too) in its place before loadtest's SLO reads it.
const xbound = "xbound"

// Relative is the share of the bound that a term of an SLO states ("0.85"
// of goodput>=0.85xbound), and whether it states one.
func Relative(term string) (share float64, ok bool, err error) {
	term = strings.TrimSpace(term)
	rest, found := strings.CutSuffix(term, xbound)
	if !found {
		return 0, false, nil
	}
	i := strings.LastIndexAny(rest, "<>=")
	if i < 0 {
		return 0, true, fmt.Errorf("%q: want METRIC>=NxBOUND", term)
	}
	metric := strings.TrimSpace(strings.TrimRight(rest[:i], "<>="))
	if metric != "rps" && metric != "goodput" {
		return 0, true, fmt.Errorf("%q: only rps and goodput can be stated against the bound", term)
	}
	share, err = strconv.ParseFloat(strings.TrimSpace(rest[i+1:]), 64)
	if err != nil || share <= 0 {
		return 0, true, fmt.Errorf("%q: want a positive number before %s", term, xbound)
	}
	return share, true, nil
}

// ResolveSLO is slo with every term stated against the bound (NxBOUND) as
// N times boundRPS requests per second; an error when a term states one
// and the phase has no bound.
func ResolveSLO(slo string, boundRPS float64) (string, error) {
	terms := strings.Split(slo, ",")
	for i, term := range terms {
		share, ok, err := Relative(term)
		if err != nil {
			return "", err
		}
		if !ok {
			continue
		}
		if boundRPS <= 0 {
			return "", fmt.Errorf("%q: the phase has no bound to hold it to", strings.TrimSpace(term))
		}
		head := strings.TrimSuffix(strings.TrimSpace(term), xbound)
		head = head[:strings.LastIndexAny(head, "<>=")+1]
		terms[i] = head + strconv.FormatFloat(share*boundRPS, 'f', -1, 64)
	}
	return strings.Join(terms, ","), nil
}

// Judged says whether expectation e is held to a run: a quick run skips
// those marked not_quick.
func Judged(e Expectation, quick bool) bool { return !(quick && e.NotQuick) }
