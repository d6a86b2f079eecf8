package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// SLO is a list of bounds a run must meet, parsed from text such as
// "p99<250ms,errors<1%". Latency bounds (p50, p90, p99, p99.9, p99.99,
// max, mean) apply to the corrected latency of successes; errors and
// rejections are shares of the requests due (sent, plus an open run's
// unsent ones, which count as errors), as a percentage or a fraction; rps
// is the answers per second and goodput the successful answers per second;
// amplification is the retry amplification, attempts over first attempts
// (Run.Amplification), a plain number such as 1.2.
// Two read the target's metrics (a run without them misses them), as a
// percentage or a fraction: pooluse is the share of the pool kept busy by
// calls that succeeded (scrape.Summary.PoolUse, Little's law), and starved
// the share of pool acquires that ended at their deadline
// (scrape.Summary.StarvedAcquires over AcquireWaits). Bounds are finite
// numbers.
type SLO []Bound

// Bound is one term of an SLO.
type Bound struct {
	Metric string  // p99, errors, rps, ...
	Op     string  // <, <=, >, >=
	Value  float64 // seconds for latencies, a fraction for shares, per second for rps
	Text   string  // as written
}

// ParseSLO parses a comma-separated list of bounds. The empty string is the empty SLO.
func ParseSLO(s string) (SLO, error) {
	var slo SLO
	for _, term := range strings.Split(s, ",") {
		term = strings.TrimSpace(term)
		if term == "" {
			continue
		}
		i := strings.IndexAny(term, "<>")
		if i <= 0 {
			return nil, fmt.Errorf("%q: want METRIC<VALUE or METRIC>VALUE", term)
		}
		b := Bound{Metric: strings.TrimSpace(term[:i]), Op: term[i : i+1], Text: term}
		rest := term[i+1:]
		if strings.HasPrefix(rest, "=") {
			b.Op += "="
			rest = rest[1:]
		}
		rest = strings.TrimSpace(rest)
		var err error
		switch {
		case figures[b.Metric] != nil:
			var d time.Duration
			d, err = time.ParseDuration(rest)
			b.Value = d.Seconds()
		case shares[b.Metric]:
			if p, ok := strings.CutSuffix(rest, "%"); ok {
				b.Value, err = strconv.ParseFloat(strings.TrimSpace(p), 64)
				b.Value /= 100
			} else {
				b.Value, err = strconv.ParseFloat(rest, 64)
			}
		case b.Metric == "rps" || b.Metric == "goodput" || b.Metric == "amplification":
			b.Value, err = strconv.ParseFloat(rest, 64)
		default:
			return nil, fmt.Errorf("%q: unknown metric %q (want p50, p90, p99, p99.9, p99.99, max, mean, errors, rejections, rps, goodput, amplification, pooluse or starved)", term, b.Metric)
		}
		if err != nil || b.Value < 0 || math.IsNaN(b.Value) || math.IsInf(b.Value, 0) {
			return nil, fmt.Errorf("%q: bad value %q", term, rest)
		}
		slo = append(slo, b)
	}
	return slo, nil
}

// Evaluation is the verdict on one bound for one run.
type Evaluation struct {
	Bound  string `json:"bound"`
	Actual string `json:"actual"`
	Met    bool   `json:"met"`
}

// Evaluate checks every bound against r.
func (s SLO) Evaluate(r Run) []Evaluation {
	out := make([]Evaluation, 0, len(s))
	for _, b := range s {
		var actual float64
		var shown string
		switch {
		case figures[b.Metric] != nil:
			if r.Latency.Success == nil || r.Latency.Success.Count == 0 {
				out = append(out, Evaluation{Bound: b.Text, Actual: "no successful request"})
				continue
			}
			d, _ := r.Latency.Success.Quantile(b.Metric)
			actual, shown = d.Seconds(), FormatSeconds(d.Seconds())
		case b.Metric == "errors":
			actual, shown = r.ErrorRate, FormatPercent(r.ErrorRate)
		case b.Metric == "rejections":
			actual, shown = r.RejectionRate, FormatPercent(r.RejectionRate)
		case b.Metric == "rps":
			actual, shown = r.Throughput, strconv.FormatFloat(r.Throughput, 'f', 1, 64)
		case b.Metric == "goodput":
			actual, shown = r.Goodput, strconv.FormatFloat(r.Goodput, 'f', 1, 64)
		case b.Metric == "amplification":
			if r.Sent == 0 {
				out = append(out, Evaluation{Bound: b.Text, Actual: "no request sent"})
				continue
			}
			actual, shown = r.Amplification, strconv.FormatFloat(r.Amplification, 'f', 2, 64)
		case b.Metric == "pooluse":
			if r.Server == nil || r.Server.PoolMax == 0 {
				out = append(out, Evaluation{Bound: b.Text, Actual: "no pool metrics"})
				continue
			}
			actual, shown = r.Server.PoolUse, FormatPercent(r.Server.PoolUse)
		case b.Metric == "starved":
			if r.Server == nil || r.Server.AcquireWaits == 0 {
				out = append(out, Evaluation{Bound: b.Text, Actual: "no pool acquires measured"})
				continue
			}
			actual = r.Server.StarvedAcquires / r.Server.AcquireWaits
			shown = FormatPercent(actual)
		}
		out = append(out, Evaluation{Bound: b.Text, Actual: shown, Met: compare(actual, b.Op, b.Value)})
	}
	return out
}

// shares are the metrics whose bounds are shares: "1%", "1 %" or "0.01".
var shares = map[string]bool{"errors": true, "rejections": true, "pooluse": true, "starved": true}

func compare(a float64, op string, b float64) bool {
	switch op {
	case "<":
		return a < b
	case "<=":
		return a <= b
	case ">":
		return a > b
	default:
		return a >= b
	}
}
