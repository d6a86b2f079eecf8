package scenario

import (
	"strings"
	"testing"

	"github.com/orderlab/orderlab/loadtest/report"
)

// A pool-wait p99 interpolated above the deadline that ends every wait is
// shown as the deadline, and the phase says why.
func TestPoolWaitP99NeverAboveTheDeadline(t *testing.T) {
	p := PhaseResult{Env: map[string]string{"REQUEST_TIMEOUT": "2s"}}
	over := report.Run{Name: "unbounded", Server: &report.Server{}}
	over.Server.AcquireWaitP99 = 2.48
	under := report.Run{Name: "semaphore", Server: &report.Server{}}
	under.Server.AcquireWaitP99 = 0.3
	if w, clamped := poolWaitP99(p, over); w != 2 || !clamped {
		t.Errorf("2.48 s against a 2 s deadline: %v (clamped %v), want 2 and clamped", w, clamped)
	}
	if w, clamped := poolWaitP99(p, under); w != 0.3 || clamped {
		t.Errorf("0.3 s: %v (clamped %v), want it as it is", w, clamped)
	}
	p.Loadtest = &report.Report{Runs: []report.Run{under}}
	if n := clampNote(p); n != "" {
		t.Errorf("nothing clamped, note %q", n)
	}
	p.Loadtest.Runs = append(p.Loadtest.Runs, over)
	if n := clampNote(p); !strings.Contains(n, "2s REQUEST_TIMEOUT") {
		t.Errorf("note %q, want the deadline named", n)
	}
}
