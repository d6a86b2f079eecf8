package composelab

// The diagnosis report: what TestDiagnosis (diagnosis_test.go, build tag
// composelab) observed, as JSON, and what is read from it. These files
// carry no build tag: the fast tier holds the committed reports under
// docs/results/diagnosis to their JSON (diagnosismd_test.go) and tests the
// reading below on observations made up for it.

import (
	"slices"
	"testing"
	"time"

	"github.com/orderlab/orderlab/lab/diagnose"
)

// diagnosisSchema names the report's layout.
const diagnosisSchema = "orderlab.diagnosis/v2"

// detectWithin is the target: a pitfall that runs is named within this long
// of its phase's start.
const detectWithin = 60 * time.Second

// diagnosisReport is one run of TestDiagnosis: every pitfall run, every
// window of background load alone or of a busy healthy load, and every
// pitfall alert Prometheus had pending or firing meanwhile.
type diagnosisReport struct {
	Schema    string    `json:"schema"`
	Command   string    `json:"command"`
	StartedAt time.Time `json:"started_at"`
	Elapsed   float64   `json:"elapsed_seconds"`
	// LoadAverage is the machine's 1-minute load average at the start and
	// at the end of the run.
	LoadAverage [2]float64        `json:"load_average"`
	Settings    diagnosisSettings `json:"settings"`
	// Pitfalls are the pitfall labels of the alerting rules Prometheus
	// loaded, in the catalog's order: the matrix's columns.
	Pitfalls []string     `json:"pitfalls"`
	Runs     []pitfallRun `json:"runs"`
	// Windows are the time each service spent under background load alone
	// (calm), under a busy healthy load (busy), or while the lab was
	// recreated (settle); a pitfall run's own window is in Runs.
	Windows []window `json:"windows"`
	// Alerts are the pitfall alerts seen outside every pitfall run's window:
	// each with the window it fell in (During), or none.
	Alerts []alertSeen `json:"alerts"`
	// PollSeconds is how often Prometheus was asked (lab diagnose's
	// client); Polls and PollErrors count the asks and the failed ones.
	PollSeconds float64 `json:"poll_seconds"`
	Polls       int     `json:"polls"`
	PollErrors  int     `json:"poll_errors"`
}

type diagnosisSettings struct {
	// PhaseSeconds: the load of the phase that runs the pitfall (the catalog's, made longer
	// when shorter: a rule reads 1-minute rates).
	PhaseSeconds float64 `json:"phase_seconds"`
	// CalmSeconds: the interval of background load alone before the first
	// pitfall run, every service at once.
	CalmSeconds float64 `json:"calm_seconds"`
	// BusySeconds: each service's busy healthy load.
	BusySeconds float64 `json:"busy_seconds"`
	// TailSeconds: how long after its phase an alert still counts as the
	// pitfall run's (its rule's windows still hold the phase).
	TailSeconds float64 `json:"tail_seconds"`
	// Models: "showing" (every model where the catalog says the pitfall
	// shows) or "one" (one of them, spread over the three: CI's shorter
	// run).
	Models        string  `json:"models"`
	TargetSeconds float64 `json:"target_seconds"`
}

// pitfallRun is one pitfall run on one model.
type pitfallRun struct {
	Pitfall  string `json:"pitfall"`
	Model    string `json:"model"`
	Scenario string `json:"scenario"` // the catalog scenario
	Phase    string `json:"phase"`    // its phase that runs the pitfall
	How      string `json:"how"`      // the command, in words
	// CatalogSays is the catalog's expectation of the phase on the model:
	// why the pitfall is expected to show there.
	CatalogSays string `json:"catalog_says"`
	// Affects are the services the run changes besides the model
	// (the database's outage reaches every service).
	Affects []string `json:"affects,omitempty"`
	// From is when the run began (the command started); PhaseStart is
	// the load's start as the runner's report gives it, PhaseSeconds its
	// length; the window ends TailSeconds after the phase.
	From         time.Time `json:"from"`
	PhaseStart   time.Time `json:"phase_start"`
	PhaseSeconds float64   `json:"phase_seconds"`
	To           time.Time `json:"to"`
	// Alerts are the pitfall alerts on the model (and on Affects) that
	// became active within the window.
	Alerts []alertSeen `json:"alerts"`
	// AlsoRan are pitfalls the catalog's phase holds besides its own
	// (per-request-memory's load starves unbounded's pool), with why: they
	// are not counted as misnamed.
	AlsoRan []string `json:"also_ran,omitempty"`
	AlsoWhy string   `json:"also_why,omitempty"`
	// Failed says why the run did not get to its end.
	Failed string `json:"failed,omitempty"`
	// Unproven says why the diagonal is not held for this run: the
	// signals that exist cannot tell it apart (docs/pitfall-alerts.md);
	// the report shows the figures.
	Unproven string `json:"unproven,omitempty"`
}

// window is a stretch of one service's time that is not a pitfall run's.
type window struct {
	Kind    string    `json:"kind"` // calm, busy or settle
	Service string    `json:"service"`
	From    time.Time `json:"from"`
	To      time.Time `json:"to"`
	Note    string    `json:"note,omitempty"`
}

// alertSeen is one pitfall alert, as lab diagnose's client saw it.
type alertSeen struct {
	Pitfall string `json:"pitfall"`
	Service string `json:"service"`
	// ActiveAt is Prometheus' activeAt: when its condition first held.
	ActiveAt time.Time `json:"active_at"`
	// Firing is the first ask that found it firing (none: pending only);
	// LastSeen the last ask that found it at all.
	Firing   *time.Time          `json:"firing,omitempty"`
	LastSeen time.Time           `json:"last_seen"`
	Evidence []diagnose.Evidence `json:"evidence,omitempty"`
	During   string              `json:"during,omitempty"` // the window it fell in: calm, busy, settle or none
}

// named are the pitfalls named (firing) on the model in s's window.
func (s pitfallRun) named() []string {
	var out []string
	for _, a := range s.Alerts {
		if a.Firing != nil && a.Service == s.Model && !slices.Contains(out, a.Pitfall) {
			out = append(out, a.Pitfall)
		}
	}
	slices.Sort(out)
	return out
}

// detected is how long after the phase's start s's own pitfall was first
// seen firing on the model; false when it was not.
func (s pitfallRun) detected() (time.Duration, bool) {
	var first *time.Time
	for _, a := range s.Alerts {
		if a.Pitfall == s.Pitfall && a.Service == s.Model && a.Firing != nil && (first == nil || a.Firing.Before(*first)) {
			first = a.Firing
		}
	}
	if first == nil {
		return 0, false
	}
	return first.Sub(s.PhaseStart), true
}

// misnamed are the other pitfalls named on the model, but those the
// run also holds.
func (s pitfallRun) misnamed() []string {
	return slices.DeleteFunc(s.named(), func(p string) bool { return p == s.Pitfall || slices.Contains(s.AlsoRan, p) })
}

// verdict is the run's outcome against the target: met, or what
// missed it.
func (s pitfallRun) verdict() string {
	d, ok := s.detected()
	other := s.misnamed()
	switch {
	case s.Failed != "":
		return "run failed"
	case !ok && len(other) == 0:
		return "not named"
	case !ok:
		return "named " + join(other) + " instead"
	case d > detectWithin:
		return "named late"
	case len(other) > 0:
		return "also named " + join(other)
	}
	return "met"
}

// falseAlarms are the pitfall alerts seen firing under background load
// alone or under the busy healthy load (or in no window at all).
func (r diagnosisReport) falseAlarms() []alertSeen {
	var out []alertSeen
	for _, a := range r.Alerts {
		if a.Firing != nil && a.During != "settle" {
			out = append(out, a)
		}
	}
	return out
}

// observed sums the windows of a kind, over every service.
func (r diagnosisReport) observed(kind string) time.Duration {
	var d time.Duration
	for _, w := range r.Windows {
		if w.Kind == kind {
			d += w.To.Sub(w.From)
		}
	}
	return d
}

func join(ss []string) string {
	out := ""
	for i, s := range ss {
		if i > 0 {
			out += ", "
		}
		out += s
	}
	return out
}

// TestPitfallRunVerdicts: a pitfall run is met when its own pitfall fires on its
// model within the target and no other does there; alerts on other
// services and pending ones name nothing.
func TestPitfallRunVerdicts(t *testing.T) {
	start := time.Date(2026, 12, 6, 14, 0, 0, 0, time.UTC)
	at := func(s int) *time.Time { v := start.Add(time.Duration(s) * time.Second); return &v }
	alert := func(pitfall, service string, firing *time.Time) alertSeen {
		return alertSeen{Pitfall: pitfall, Service: service, ActiveAt: start, Firing: firing}
	}
	cases := []struct {
		name   string
		alerts []alertSeen
		want   string
		detect string
	}{
		{"its own, in time", []alertSeen{alert("pool-starvation", "unbounded", at(41))}, "met", "41 s"},
		{"its own, the earlier of two", []alertSeen{alert("pool-starvation", "unbounded", at(70)), alert("pool-starvation", "unbounded", at(35))}, "met", "35 s"},
		{"late", []alertSeen{alert("pool-starvation", "unbounded", at(61))}, "named late", "61 s (late)"},
		{"pending only", []alertSeen{alert("pool-starvation", "unbounded", nil)}, "not named", "not named"},
		{"another service's", []alertSeen{alert("pool-starvation", "semaphore", at(20))}, "not named", "not named"},
		{"another pitfall", []alertSeen{alert("db-latency", "unbounded", at(30))}, "named db-latency instead", "not named"},
		{"its own and another", []alertSeen{alert("pool-starvation", "unbounded", at(30)), alert("nested-acquire", "unbounded", at(50))}, "also named nested-acquire", "30 s"},
		{"one the run also holds", []alertSeen{alert("pool-starvation", "unbounded", at(30)), alert("per-request-memory", "unbounded", at(20))}, "met", "30 s"},
		{"another, pending only", []alertSeen{alert("pool-starvation", "unbounded", at(30)), alert("nested-acquire", "unbounded", nil)}, "met", "30 s"},
	}
	for _, c := range cases {
		s := pitfallRun{Pitfall: "pool-starvation", Model: "unbounded", PhaseStart: start, Alerts: c.alerts}
		if c.name == "one the run also holds" {
			s.AlsoRan = []string{"per-request-memory"}
		}
		if got := s.verdict(); got != c.want {
			t.Errorf("%s: verdict %q, want %q", c.name, got, c.want)
		}
		if got := detectCell(s); got != c.detect {
			t.Errorf("%s: time to detect %q, want %q", c.name, got, c.detect)
		}
	}

	r := diagnosisReport{
		Windows: []window{
			{Kind: "calm", Service: "unbounded", From: start, To: start.Add(10 * time.Minute)},
			{Kind: "calm", Service: "semaphore", From: start, To: start.Add(5 * time.Minute)},
			{Kind: "busy", Service: "pipeline", From: start, To: start.Add(90 * time.Second)},
		},
		Alerts: []alertSeen{
			{Pitfall: "db-restart", Service: "pipeline", During: "settle", Firing: at(3)},
			{Pitfall: "pool-starvation", Service: "pipeline", During: "busy", Firing: at(40)},
			{Pitfall: "nested-acquire", Service: "unbounded", During: "calm"},
		},
	}
	if fa := r.falseAlarms(); len(fa) != 1 || fa[0].Pitfall != "pool-starvation" {
		t.Errorf("false alarms %+v, want the busy load's pool-starvation only (settle is not counted, pending names nothing)", fa)
	}
	if got := r.observed("calm"); got != 15*time.Minute {
		t.Errorf("calm observed %s, want 15m (summed over services)", got)
	}
}
