package report

import "fmt"

// LagShare is how much of the measured median latency the generator's own
// lateness may reach at its p99 before an open run's report warns that the
// figures measure the generator as much as the service: the lateness is in
// every corrected latency, so at 10 % of the median it is no longer small.
const LagShare = 0.10

// lateShare is the share of an open run's requests found due with every
// connection busy above which its lateness is blamed on -c, not on the
// generator's CPU.
const lateShare = 0.01

// lagWarning returns the run's lateness warning, or "" when it has none:
// in open runs only, where the lateness is inside the corrected latencies.
func lagWarning(r Run) string {
	lag, ok := r.Latency.SchedulerLag, r.Latency.Success
	if r.Settings.Mode != "open" || lag == nil || ok == nil || lag.Count == 0 || ok.Count == 0 {
		return ""
	}
	if lag.P99 <= LagShare*ok.P50 {
		return ""
	}
	head := fmt.Sprintf("the generator's own lateness p99 %s is more than %.0f %% of the measured p50 %s",
		FormatSeconds(lag.P99), 100*LagShare, FormatSeconds(ok.P50))
	if due := r.Sent + r.Unsent; due > 0 && float64(r.Late) > lateShare*float64(due) {
		return fmt.Sprintf("%s: %d requests fell due while all %d connections were busy: raise -c, or the service stalled",
			head, r.Late, r.Settings.Concurrency)
	}
	return head + ": the generator, not the service, is the bottleneck: use -shard or a bigger machine"
}

// lagOf is a column's lateness figure of a run, or "-".
func lagOf(q string) func(Run) string {
	return func(r Run) string {
		l := r.Latency.SchedulerLag
		if l == nil || l.Count == 0 {
			return "-"
		}
		d, _ := l.Quantile(q)
		return FormatSeconds(d.Seconds())
	}
}

func anyLag(runs []Run) bool {
	for _, r := range runs {
		if l := r.Latency.SchedulerLag; l != nil && l.Count > 0 {
			return true
		}
	}
	return false
}
