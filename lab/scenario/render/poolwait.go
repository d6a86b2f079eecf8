package render

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/orderlab/orderlab/lab/scenario/result"
	"github.com/orderlab/orderlab/loadtest/report"
	"github.com/orderlab/orderlab/loadtest/scrape"
)

// poolWaitP99 is run's p99 pool-acquire wait, at most the phase's
// REQUEST_TIMEOUT: every wait ends at that deadline, but the p99 is read
// from histogram buckets, and interpolating inside the bucket that holds
// the deadline can land above it. The scrape caps it at the deadline the
// service showed (scrape.Summary); a report written before it did is
// capped here. clamped says it was, either way.
func poolWaitP99(p result.PhaseResult, r report.Run) (wait float64, clamped bool) {
	wait = r.Server.AcquireWaitP99
	if r.Server.AcquireWaitP99Capped {
		return wait, true
	}
	if d := deadlineOf(p); d > 0 && wait > d {
		return d, true
	}
	return wait, false
}

// deadlineOf is phase p's REQUEST_TIMEOUT in seconds; 0 when it shows none.
func deadlineOf(p result.PhaseResult) float64 {
	if d, err := time.ParseDuration(p.Env["REQUEST_TIMEOUT"]); err == nil && d > 0 {
		return d.Seconds()
	}
	return 0
}

// chartRuns are runs as the pool-wait chart draws them: each sample's p99
// at most the phase's deadline, as poolWaitP99 does for the run's figure.
// The scrape caps them already; a report written before it did is capped
// here, on copies (p is left as it is). capped says a sample was.
func chartRuns(p result.PhaseResult, runs []report.Run) (out []report.Run, capped bool) {
	d := deadlineOf(p)
	out = slices.Clone(runs)
	for i, r := range out {
		if d == 0 || r.Server == nil || !slices.ContainsFunc(r.Server.Samples, func(x scrape.Sample) bool { return x.AcquireWaitP99 > d }) {
			continue
		}
		sv := *r.Server
		sv.Samples = slices.Clone(sv.Samples)
		for j := range sv.Samples {
			sv.Samples[j].AcquireWaitP99 = min(sv.Samples[j].AcquireWaitP99, d)
		}
		out[i].Server, capped = &sv, true
	}
	return out, capped
}

// quickLine says, for a quick run, at what size it ran; "" at full size.
func quickLine(res *result.Result) string {
	if !res.Quick || res.Scenario.QuickFactor == 0 {
		return ""
	}
	f := res.Scenario.QuickFactor
	if f == 1 {
		return "Quick run at full size, each phase shortened: the figures are this run's."
	}
	return fmt.Sprintf("Quick run at 1/%s of the full size: the pools, the clients, the rates and the bounds divided by %s, "+
		"each phase shortened; every figure, bound and expectation here is this size's.", strconv.FormatFloat(f, 'f', -1, 64), strconv.FormatFloat(f, 'f', -1, 64))
}

// clampNote says, for a phase where some run's pool-wait p99 was clamped
// to the deadline (its figure, or a sample of its chart), why; "" for the
// others.
func clampNote(p result.PhaseResult) string {
	if p.Loadtest == nil {
		return ""
	}
	note := "Pool wait p99 is read from the histogram's buckets; where interpolating put it above the " +
		p.Env["REQUEST_TIMEOUT"] + " REQUEST_TIMEOUT that ends every wait, the table and the chart show the deadline."
	for _, r := range p.Loadtest.Runs {
		if r.Server == nil {
			continue
		}
		if _, clamped := poolWaitP99(p, r); clamped {
			return note
		}
	}
	if _, capped := chartRuns(p, p.Loadtest.Runs); capped {
		return note
	}
	return ""
}
