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
// (Run.Amplification), a plain number such as 1.2. server_rejections reads
// the target's metrics: the rejections the server itself counted
// (orderlab_limiter_rejections_total and orderlab_pipeline_rejections_total)
// a second over the run. Each runs the same short admission path, so their
// rate is what the server's CPU spent on saying no grows with.
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
		case b.Metric == "rps" || b.Metric == "goodput" || b.Metric == "amplification" || b.Metric == "server_rejections":
			b.Value, err = strconv.ParseFloat(rest, 64)
		default:
			return nil, fmt.Errorf("%q: unknown metric %q (want p50, p90, p99, p99.9, p99.99, max, mean, errors, rejections, rps, goodput, amplification, server_rejections, pooluse or starved)", term, b.Metric)
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
		actual, shown, ok := Figure(b.Metric, r)
		out = append(out, Evaluation{Bound: b.Text, Actual: shown, Met: ok && compare(actual, b.Op, b.Value)})
	}
	return out
}

// Figure is r's figure that an SLO's metric names, in the unit its bounds
// are written in (seconds, a fraction, per second), and as a report shows
// it; false, and why in place of the figure, when r has none (no success
// to take a latency of, no server metrics).
func Figure(metric string, r Run) (v float64, shown string, ok bool) {
	switch {
	case figures[metric] != nil:
		if r.Latency.Success == nil || r.Latency.Success.Count == 0 {
			return 0, "no successful request", false
		}
		d, _ := r.Latency.Success.Quantile(metric)
		return d.Seconds(), FormatSeconds(d.Seconds()), true
	case metric == "errors":
		return r.ErrorRate, FormatPercent(r.ErrorRate), true
	case metric == "rejections":
		return r.RejectionRate, FormatPercent(r.RejectionRate), true
	case metric == "rps":
		return r.Throughput, strconv.FormatFloat(r.Throughput, 'f', 1, 64), true
	case metric == "goodput":
		return r.Goodput, strconv.FormatFloat(r.Goodput, 'f', 1, 64), true
	case metric == "amplification":
		if r.Sent == 0 {
			return 0, "no request sent", false
		}
		return r.Amplification, strconv.FormatFloat(r.Amplification, 'f', 2, 64), true
	case metric == "server_rejections":
		if r.Server == nil || r.Server.Scrapes == 0 || r.ElapsedSeconds <= 0 {
			return 0, "no server metrics", false
		}
		v := r.Server.Rejections / r.ElapsedSeconds
		return v, strconv.FormatFloat(v, 'f', 1, 64), true
	case metric == "pooluse":
		if r.Server == nil || r.Server.PoolMax == 0 {
			return 0, "no pool metrics", false
		}
		return r.Server.PoolUse, FormatPercent(r.Server.PoolUse), true
	case metric == "starved":
		if r.Server == nil || r.Server.AcquireWaits == 0 {
			return 0, "no pool acquires measured", false
		}
		v := r.Server.StarvedAcquires / r.Server.AcquireWaits
		return v, FormatPercent(v), true
	}
	return 0, "unknown metric " + metric, false
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
