package scenario

import (
	"fmt"
	"strconv"
	"time"

	"github.com/orderlab/orderlab/loadtest/report"
)

// poolWaitP99 is run's p99 pool-acquire wait, at most the phase's
// REQUEST_TIMEOUT: every wait ends at that deadline, but the p99 is read
// from histogram buckets, and interpolating inside the bucket that holds
// the deadline can land above it (2.48 s against 2 s). clamped says it was.
func poolWaitP99(p PhaseResult, r report.Run) (wait float64, clamped bool) {
	wait = r.Server.AcquireWaitP99
	if d, err := time.ParseDuration(p.Env["REQUEST_TIMEOUT"]); err == nil && d > 0 && wait > d.Seconds() {
		return d.Seconds(), true
	}
	return wait, false
}

// quickLine says, for a quick run, at what size it ran; "" at full size.
func quickLine(res *Result) string {
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
// to the deadline, why; "" for the others.
func clampNote(p PhaseResult) string {
	if p.Loadtest == nil {
		return ""
	}
	for _, r := range p.Loadtest.Runs {
		if r.Server == nil {
			continue
		}
		if _, clamped := poolWaitP99(p, r); clamped {
			return "Pool wait p99 is read from the histogram's buckets; where interpolating put it above the " +
				p.Env["REQUEST_TIMEOUT"] + " REQUEST_TIMEOUT that ends every wait, the table shows the deadline."
		}
	}
	return ""
}
