package scenario

import (
	"time"

	"github.com/orderlab/orderlab/loadtest/measure"
)

// Planned is how long phase p's load takes against n targets, pause
// between them: its duration per target (an in-process phase of sleeping
// jobs: its bound), 0 when only the load decides (a burst, a request count).
func (p Phase) Planned(n int, pause time.Duration) time.Duration {
	switch {
	case p.Load != nil && p.Load.Duration > 0:
		return time.Duration(n)*p.Load.Duration.D() + time.Duration(max(0, n-1))*pause
	case p.Tasks != nil && p.Tasks.Sleep > 0:
		if w := p.Tasks.Workers; w > 0 {
			return time.Duration((p.Tasks.Jobs+w-1)/w) * p.Tasks.Sleep.D()
		}
		return p.Tasks.Sleep.D()
	}
	return 0
}

// PauseOf is the default pause between targets: measure.DefaultPause,
// 200 ms in quick mode.
func PauseOf(quick bool) time.Duration {
	if quick {
		return 200 * time.Millisecond
	}
	return measure.DefaultPause
}

// Planned is s's whole planned load, every phase in turn, with the
// default pauses (PauseOf): s as it runs, so Quick(s) for a quick run.
func (s Scenario) Planned(quick bool) time.Duration {
	var d time.Duration
	for _, p := range s.Phases {
		d += p.Planned(len(s.Targets), PauseOf(quick))
	}
	return d
}
