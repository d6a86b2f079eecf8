package mystery

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/orderlab/orderlab/lab/diagnose"
	"github.com/orderlab/orderlab/lab/front/api"
	"github.com/orderlab/orderlab/lab/scenario/result"
)

// TestNoteKeepsEachAlertOnce: what the lab sees during a mystery keeps each
// pitfall on each service once, from its first reading to its last, with
// the last evidence; a failed question is remembered, not counted.
func TestNoteKeepsEachAlertOnce(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	leak := func(ev string) Finding {
		f := Finding{Summary: ev}
		f.Pitfall, f.Service = "connection-leak", "unbounded"
		return f
	}
	var m mystery
	m.note(nil, fmt.Errorf("connection refused"), t0)
	m.note([]Finding{leak("first")}, nil, t0.Add(5*time.Second))
	m.note(nil, nil, t0.Add(10*time.Second))
	m.note([]Finding{leak("last"), {Finding: diagnoseFinding("pool-starvation", "semaphore")}}, nil, t0.Add(15*time.Second))
	if m.questions != 3 || m.askErr != "connection refused" || len(m.seen) != 2 {
		t.Fatalf("%d questions, error %q, seen %+v", m.questions, m.askErr, m.seen)
	}
	if s := m.seen[0]; s.Summary != "last" || !s.FirstSeen.Equal(t0.Add(5*time.Second)) || !s.LastSeen.Equal(t0.Add(15*time.Second)) {
		t.Errorf("the leak: %+v", s)
	}
	if s := m.seen[1]; s.Pitfall != "pool-starvation" || !s.FirstSeen.Equal(t0.Add(15*time.Second)) {
		t.Errorf("the starvation: %+v", s)
	}
}

func diagnoseFinding(pitfall, service string) diagnose.Finding {
	return diagnose.Finding{Pitfall: pitfall, Service: service}
}

// TestARunHoldsBackWhatNamesItsMystery: a mystery run's log and error name
// its knobs, its verdicts and report its pitfall: none of them is in its
// view until it is answered, and all of them are after.
func TestARunHoldsBackWhatNamesItsMystery(t *testing.T) {
	m := &mystery{}
	run := api.Run{ID: 4, Scenario: "mystery", Mystery: true, State: api.StateFailed, Error: "phase mystery: PATCH LEAK_EVERY: refused",
		Verdicts: []result.Verdict{{Target: "unbounded", Says: "connection-leak: the pool runs dry"}}, Conclusion: "the leak shows",
		Fix: "release every connection", Explanation: []string{"unbounded: leaks"}, Report: &api.Links{HTML: "/api/runs/4/report.html"},
		Log: []string{"   knobs: LEAK_EVERY=7 on unbounded"}}
	// view is the run as the page shows it, its Secret m beside it.
	view := func() string {
		v := run
		if m.Hidden() {
			v = m.Withhold(v)
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	before := view()
	for _, tell := range []string{"LEAK_EVERY", "leak", "report.html", "release every"} {
		if strings.Contains(before, tell) {
			t.Errorf("before the answer the run says %q: %s", tell, before)
		}
	}
	if !strings.Contains(before, "shown once the mystery is answered") {
		t.Errorf("before the answer the run does not say what it holds back: %s", before)
	}
	m.answer = "pool-starvation"
	after := view()
	for _, tell := range []string{"LEAK_EVERY=7", "PATCH LEAK_EVERY", "connection-leak: the pool", "report.html", "release every"} {
		if !strings.Contains(after, tell) {
			t.Errorf("after the answer the run lacks %q: %s", tell, after)
		}
	}
}
