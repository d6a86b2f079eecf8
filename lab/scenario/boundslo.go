package scenario

import (
	"fmt"
	"slices"
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

// Versus is a term of an SLO held to another phase's figure of the same
// target: goodput>=1xopen-honor is at least the goodput the target had in
// phase open-honor, server_rejections<0.5xopen-immediate under half of its
// rejections a second there. Only a verdict, which sees every phase, holds
// it; a run's own SLO leaves it out.
type Versus struct {
	Metric, Op, Phase, Text string
	Share                   float64
}

// versusMetrics are the figures a phase may be held to another phase's by.
var versusMetrics = []string{"goodput", "rps", "amplification", "server_rejections"}

// SplitVersus splits slo into its terms held to another phase and the rest.
func SplitVersus(slo string) (rest string, vs []Versus, err error) {
	var own []string
	for _, term := range strings.Split(slo, ",") {
		term = strings.TrimSpace(term)
		i := strings.IndexAny(term, "<>")
		if term == "" || i <= 0 || strings.HasSuffix(term, xbound) {
			own = append(own, term)
			continue
		}
		v := Versus{Metric: strings.TrimSpace(term[:i]), Op: term[i : i+1], Text: term}
		value := term[i+1:]
		if strings.HasPrefix(value, "=") {
			v.Op, value = v.Op+"=", value[1:]
		}
		n, phase, found := strings.Cut(strings.TrimSpace(value), "x")
		share, perr := strconv.ParseFloat(n, 64)
		if !found || perr != nil || phase == "" {
			own = append(own, term)
			continue
		}
		if !slices.Contains(versusMetrics, v.Metric) {
			return "", nil, fmt.Errorf("%q: only %s can be held to another phase", term, strings.Join(versusMetrics, ", "))
		}
		if share <= 0 {
			return "", nil, fmt.Errorf("%q: want a positive number before x%s", term, phase)
		}
		v.Share, v.Phase = share, phase
		vs = append(vs, v)
	}
	return strings.Join(own, ","), vs, nil
}

// ResolveSLO is slo with every term stated against the bound (NxBOUND) as
// N times boundRPS requests per second, and without the terms held to
// another phase (versus); an error when a term states a bound and the
// phase has none.
func ResolveSLO(slo string, boundRPS float64) (string, error) {
	slo, _, err := SplitVersus(slo)
	if err != nil {
		return "", err
	}
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
