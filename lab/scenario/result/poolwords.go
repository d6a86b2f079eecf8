package result

import (
	"fmt"
	"math"

	"github.com/orderlab/orderlab/lab/scenario"
	"github.com/orderlab/orderlab/loadtest/report"
)

// stretched is how much longer than the bound's nominal hold the measured
// mean hold must be for the words to say the machine stretched it.
const stretched = 1.1

// poolUseInWords is a pooluse term held to one run: the share of the pool
// that calls which succeeded kept busy, by Little's law from the run's own
// figures, what the model controls; then, for a phase with a bound, the
// nominal bound, what a quiet machine would give, and the hold that
// decided how much of it this machine gave. When one of the two falls
// short of the term's share, the line says which: "semaphore kept its 5
// connections 97 % busy with transactions that committed (Little's law:
// 84/s × 58.0ms mean hold ÷ 5); target ≥ 90 %: met; the machine stretched
// each hold from 50.0ms to 58.0ms, so it committed 84/s = 84 % of the
// nominal 100/s bound (what a quiet machine would give): the machine fell
// short of the nominal bound, not the model".
func poolUseInWords(run report.Run, ph measuredPhase, b report.Bound, ev report.Evaluation) string {
	mark := map[bool]string{true: "met", false: "missed"}[ev.Met]
	target := fmt.Sprintf("target %s %.0f %%", ops[b.Op], 100*b.Value)
	s := run.Server
	if s == nil || s.PoolMax == 0 {
		return fmt.Sprintf("%s: no pool metrics, so no pool use; %s: %s", run.Name, target, mark)
	}
	what := "calls that succeeded"
	if ph.committed {
		what = "transactions that committed"
	}
	line := fmt.Sprintf("%s kept its %s connections %s busy with %s (Little's law: %s/s × %s mean hold ÷ %s); %s: %s",
		run.Name, scenario.FormatFigure(s.PoolMax), beside(s.PoolUse, b.Value), what, rate(s.OKHoldsPerSecond),
		report.FormatSeconds(s.MeanOKHoldSeconds), scenario.FormatFigure(s.PoolMax), target, mark)
	if ph.boundRPS <= 0 || ph.hold <= 0 || s.MeanOKHoldSeconds <= 0 {
		if !ev.Met {
			line += ": the model fell short: the pool stood idle or served calls that failed"
		}
		return line
	}
	nominal, held := ph.hold.Seconds(), s.MeanOKHoldSeconds
	share := run.Goodput / ph.boundRPS
	hold := fmt.Sprintf("each hold took %s against the nominal %s", report.FormatSeconds(held), report.FormatSeconds(nominal))
	if held >= stretched*nominal {
		hold = fmt.Sprintf("the machine stretched each hold from %s to %s", report.FormatSeconds(nominal), report.FormatSeconds(held))
	}
	line += fmt.Sprintf("; %s, so it %s %s/s = %.0f %% of the nominal %s/s bound (what a quiet machine would give)",
		hold, ph.successVerb(), rate(run.Goodput), 100*share, rate(ph.boundRPS))
	switch {
	case !ev.Met:
		line += ": the model fell short: the pool stood idle or served calls that failed"
	case share < b.Value:
		line += ": the machine fell short of the nominal bound, not the model"
	}
	return line
}

// beside writes the share v as a whole percentage, or with a decimal
// where the whole one would read as the target's own (89.9 % against 90 %
// is a miss).
func beside(v, target float64) string {
	if v != target && math.Round(100*v) == math.Round(100*target) {
		// Rounded away from the target, so that 89.96 % of a 90 % target
		// never reads 90.0 % beside "missed".
		tenths := math.Floor(1000 * v)
		if v > target {
			tenths = math.Ceil(1000 * v)
		}
		return fmt.Sprintf("%.1f %%", tenths/10)
	}
	return fmt.Sprintf("%.0f %%", 100*v)
}

// starvedInWords is a starved term held to one run: the pool acquires that
// their deadline ended while they waited.
func starvedInWords(run report.Run, b report.Bound, ev report.Evaluation) string {
	mark := map[bool]string{true: "met", false: "missed"}[ev.Met]
	target := fmt.Sprintf("target %s %s", ops[b.Op], spacedPercent(b.Value))
	s := run.Server
	if s == nil || s.AcquireWaits == 0 {
		return fmt.Sprintf("%s: no pool acquires measured; %s: %s", run.Name, target, mark)
	}
	return fmt.Sprintf("%s starved %s of %s pool acquires (%s) until their deadline; %s: %s", run.Name,
		scenario.FormatFigure(s.StarvedAcquires), scenario.FormatFigure(s.AcquireWaits), spacedPercent(s.StarvedAcquires/s.AcquireWaits), target, mark)
}
