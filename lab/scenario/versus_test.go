package scenario

import (
	"strings"
	"testing"
)

// A run's own SLO leaves out the terms held to other phases; a scenario
// may only name a phase it has, other than the expectation's own.
func TestVersusTermsNameAnotherPhase(t *testing.T) {
	if got, err := ResolveSLO("goodput>=1xhonor, p99<1s,rps>=2xbound", 100); err != nil || got != "p99<1s,rps>=200" {
		t.Errorf("resolved %q (%v), want p99<1s,rps>=200", got, err)
	}
	for _, bad := range []string{"p99<1xhonor", "goodput>=-1xhonor"} {
		if _, err := ResolveSLO(bad, 100); err == nil {
			t.Errorf("%q: resolved, want an error", bad)
		}
	}
	two := strings.Replace(valid, "expect:\n", "  - name: q\n    request: {path: \"/work/db?delay=20ms\"}\n    load: {mode: closed, concurrency: 5, duration: 1s}\nexpect:\n", 1)
	for slo, ok := range map[string]bool{"goodput>=1xq": true, "goodput>=1xnone": false, "goodput>=1xp": false} {
		text := strings.Replace(two, `    slo: "p99<250ms"`, "    phase: p\n    slo: \""+slo+"\"", 1)
		if _, err := Parse([]byte(text)); (err == nil) != ok {
			t.Errorf("%s: parse error %v, want ok=%v", slo, err, ok)
		}
	}
}
