package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orderlab/orderlab/lab/knobs/knobstest"
	"github.com/orderlab/orderlab/lab/scenario"
	"github.com/orderlab/orderlab/lab/scenario/result"
	"github.com/orderlab/orderlab/lab/scenario/setup"
	"github.com/orderlab/orderlab/loadtest/annotate"
)

// These tests run the runner against running services as it runs against
// the lab, with loopback services that implement the knob API as specified
// (knobstest) and serve the API: the services' own knob endpoint is tested
// in their packages and, with this runner, in e2e.

const labYAML = `
name: lab-knobs
title: knobs per phase
reproduces: a test
question: do the knobs follow the phases?
targets: [unbounded, semaphore]
env: {DB_MAX_CONNS: "10", REQUEST_TIMEOUT: 2s}
phases:
  - name: limit-5
    env: {LIMIT: "5", LEAK_EVERY: "10"}
    request: {path: "/work/db?delay=1ms"}
    load: {mode: closed, concurrency: 2, duration: 300ms}
  - name: still-5
    continue: true
    request: {path: "/work/db?delay=1ms"}
    load: {mode: closed, concurrency: 2, duration: 300ms}
  - name: pool-5
    env: {DB_MAX_CONNS: "5"}
    request: {path: "/work/db?delay=1ms"}
    load: {mode: closed, concurrency: 2, duration: 300ms}
expect:
  - target: semaphore
    says: answers
    slo: "errors<1%"
  - target: unbounded
    says: is read from the table
panels: [Pool acquire wait p99]
`

// labFixture is two fake services and a fake Grafana.
type labFixture struct {
	svcs    map[string]*knobstest.Service
	initial map[string]map[string]string
	marks   *fakeGrafana
	runner  *Runner
	lab     *setup.Lab // the runner's Mode
}

// newLabFixture's services show dbURL as DATABASE_URL in GET /knobs, when given.
func newLabFixture(t *testing.T, dbURL ...string) *labFixture {
	t.Helper()
	f := &labFixture{svcs: map[string]*knobstest.Service{}, initial: map[string]map[string]string{}}
	eps := map[string]setup.Endpoint{}
	for _, name := range []string{"unbounded", "semaphore"} {
		vals := map[string]string{"DB_MAX_CONNS": "20", "REQUEST_TIMEOUT": "30s", "DB_DELAY": "0s", "LEAK_EVERY": "0"}
		if name == "semaphore" {
			vals["LIMIT"], vals["LIMIT_WAIT"] = "", "100ms"
		}
		for _, u := range dbURL {
			vals["DATABASE_URL"] = u
		}
		svc := knobstest.New("lab-token", vals)
		svc.GaugeLag = 100 * time.Millisecond
		t.Cleanup(svc.Close)
		f.svcs[name], f.initial[name] = svc, vals
		eps[name] = setup.Endpoint{URL: svc.URL, MetricsURL: svc.URL + "/metrics", AdminURL: svc.URL}
	}
	f.marks = newFakeGrafana(t)
	client, err := annotate.New(f.marks.URL)
	if err != nil {
		t.Fatal(err)
	}
	f.lab = &setup.Lab{Endpoints: eps, Token: "lab-token"}
	f.runner = &Runner{Mode: f.lab, Annotate: client, Board: "http://grafana.test/d/orderlab-pool-starvation",
		Out: t.TempDir(), Pause: 10 * time.Millisecond, Scrape: 50 * time.Millisecond, Log: testWriter{t}}
	return f
}

func labScenario(t *testing.T, edit func(*scenario.Scenario)) scenario.Scenario {
	t.Helper()
	s, err := scenario.Parse([]byte(labYAML))
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(&s)
	}
	return s
}

// checkRestored fails unless every knob is back at its initial value, and
// as the service started (a knob put back by value would no longer follow
// DB_MAX_CONNS).
func (f *labFixture) checkRestored(t *testing.T) {
	t.Helper()
	for name, svc := range f.svcs {
		if got := svc.Values(); !maps.Equal(got, f.initial[name]) {
			t.Errorf("%s: knobs after the run = %v, want them restored to %v", name, got, f.initial[name])
		}
		if rt := svc.Runtime(); len(rt) > 0 {
			t.Errorf("%s: %v left as set at runtime, want them back as the service started", name, rt)
		}
	}
}

func TestLabRunAppliesEachPhasesKnobsAnnotatesAndRestores(t *testing.T) {
	f := newLabFixture(t)
	seen := map[string]map[string]map[string]string{} // phase -> target -> knobs
	f.runner.afterKnobs = func(phase string) {
		seen[phase] = map[string]map[string]string{}
		for name, svc := range f.svcs {
			seen[phase][name] = svc.Values()
		}
	}
	res, files, err := f.runner.Run(context.Background(), labScenario(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	f.checkRestored(t)

	for _, tc := range []struct{ phase, target, knob, want string }{
		{"limit-5", "semaphore", "LIMIT", "5"},
		{"limit-5", "semaphore", "DB_MAX_CONNS", "10"},
		{"limit-5", "unbounded", "DB_MAX_CONNS", "10"},
		{"limit-5", "unbounded", "REQUEST_TIMEOUT", "2s"},
		{"still-5", "semaphore", "LIMIT", "5"},
		{"pool-5", "semaphore", "DB_MAX_CONNS", "5"},
		{"pool-5", "semaphore", "LIMIT", ""}, // not set by the phase: the value found
		{"pool-5", "unbounded", "DB_DELAY", "0s"},
	} {
		if got := seen[tc.phase][tc.target][tc.knob]; got != tc.want {
			t.Errorf("phase %s: %s %s = %q, want %q", tc.phase, tc.target, tc.knob, got, tc.want)
		}
	}
	if _, ok := f.svcs["unbounded"].Values()["LIMIT"]; ok {
		t.Error("LIMIT was set on unbounded, which has no limiter")
	}
	for _, p := range f.svcs["unbounded"].Patches() {
		if _, ok := p["DB_DELAY"]; ok {
			t.Errorf("PATCH %v changes DB_DELAY, which no phase sets", p)
		}
	}
	for name, svc := range f.svcs {
		if n := svc.Released(); n != 1 {
			t.Errorf("%s: leaked connections handed back %d times, want once (LEAK_EVERY was set)", name, n)
		}
	}
	if n := f.svcs["semaphore"].Requests(); n == 0 {
		t.Error("the phases sent the semaphore no request")
	}

	marks := f.marks.done()
	if len(marks) != 3 {
		t.Fatalf("annotations = %+v, want one per phase", marks)
	}
	for i, phase := range []string{"limit-5", "still-5", "pool-5"} {
		m := marks[i]
		if !strings.Contains(m.Text, "phase "+phase) || !strings.Contains(m.Text, "do the knobs follow the phases?") ||
			strings.Join(m.Tags, ",") != "loadtest,scenario,lab-knobs" || m.End < m.Time || m.End == 0 {
			t.Errorf("annotation %d = %+v, want phase %s, the question, tags loadtest,scenario,lab-knobs, an end", i, m, phase)
		}
	}
	want := fmt.Sprintf("http://grafana.test/d/orderlab-pool-starvation?from=%d&to=", res.StartedAt.UnixMilli())
	if !strings.HasPrefix(res.Board, want) || marks[2].End > boardTo(t, res.Board) {
		t.Errorf("board URL %q, want %s... ending after the last phase (%d)", res.Board, want, marks[2].End)
	}
	v := result.Verdicts(res)
	if len(v) != 2 || !strings.HasPrefix(v[0], "MET    semaphore: errors<1%") || !strings.HasPrefix(v[1], "READ   unbounded") {
		t.Errorf("verdicts = %q", v)
	}
	if files.Markdown == "" || res.Local {
		t.Errorf("files %+v, local %v", files, res.Local)
	}
}

func TestLabRunRestoresTheKnobsAfterAFailedPhaseCtrlCAndAPanic(t *testing.T) {
	t.Run("failed phase", func(t *testing.T) {
		f := newLabFixture(t)
		s := labScenario(t, func(s *scenario.Scenario) { s.Phases[2].Env = map[string]string{"LIMIT": "many"} })
		_, _, err := f.runner.Run(context.Background(), s)
		if err == nil || !strings.Contains(err.Error(), "phase pool-5") || !strings.Contains(err.Error(), "LIMIT") {
			t.Errorf("Run = %v, want the 400 on LIMIT in phase pool-5", err)
		}
		f.checkRestored(t)
	})
	t.Run("ctrl-c", func(t *testing.T) {
		f := newLabFixture(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		f.svcs["semaphore"].OnRequest = func(*http.Request) { cancel() }
		_, _, err := f.runner.Run(ctx, labScenario(t, nil))
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run = %v, want context.Canceled", err)
		}
		f.checkRestored(t)
		if marks := f.marks.done(); len(marks) == 0 || marks[len(marks)-1].End == 0 {
			t.Errorf("annotations after Ctrl-C = %+v, want the last one ended", marks)
		}
	})
	t.Run("panic", func(t *testing.T) {
		f := newLabFixture(t)
		f.runner.afterKnobs = func(phase string) {
			if phase == "pool-5" {
				panic("boom")
			}
		}
		func() {
			defer func() {
				if r := recover(); r != "boom" {
					t.Errorf("recovered %v, want the panic to go on after the restore", r)
				}
			}()
			_, _, _ = f.runner.Run(context.Background(), labScenario(t, nil))
		}()
		f.checkRestored(t)
	})
}

func TestLabRunRefusesWhatRunningServicesCannotGive(t *testing.T) {
	f := newLabFixture(t)
	s := labScenario(t, func(s *scenario.Scenario) { s.Phases[0].Env["HTTP_SERVER"] = "nbio" })
	_, _, err := f.runner.Run(context.Background(), s)
	if err == nil || !strings.Contains(err.Error(), "HTTP_SERVER changed live") {
		t.Errorf("Run = %v, want a refusal naming HTTP_SERVER", err)
	}
	if n := len(f.svcs["semaphore"].Patches()); n != 0 {
		t.Errorf("%d PATCHes before the refusal", n)
	}
}

func boardTo(t *testing.T, u string) int64 {
	t.Helper()
	var to int64
	if _, err := fmt.Sscanf(u[strings.LastIndex(u, "&to=")+4:], "%d", &to); err != nil {
		t.Fatal(err)
	}
	return to
}

// fakeGrafana records annotations as Grafana's HTTP API takes them.
type fakeGrafana struct {
	*httptest.Server
	mu    sync.Mutex
	marks []mark
}

type mark struct {
	Text      string   `json:"text"`
	Tags      []string `json:"tags"`
	Time, End int64
}

func newFakeGrafana(t *testing.T) *fakeGrafana {
	g := &fakeGrafana{}
	g.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			mark
			Time    int64 `json:"time"`
			TimeEnd int64 `json:"timeEnd"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		g.mu.Lock()
		defer g.mu.Unlock()
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/api/annotations":
			body.mark.Time = body.Time
			g.marks = append(g.marks, body.mark)
			fmt.Fprintf(w, `{"id":%d}`, len(g.marks))
		case r.Method == http.MethodPatch:
			var id int
			if _, err := fmt.Sscanf(r.URL.Path, "/api/annotations/%d", &id); err != nil || id < 1 || id > len(g.marks) {
				http.NotFound(w, r)
				return
			}
			g.marks[id-1].End = body.TimeEnd
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(g.Close)
	return g
}

func (g *fakeGrafana) done() []mark {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]mark(nil), g.marks...)
}
