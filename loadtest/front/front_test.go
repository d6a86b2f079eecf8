package front

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/orderlab/orderlab/internal/pgtest"
	"github.com/orderlab/orderlab/internal/poll"
	"github.com/orderlab/orderlab/loadtest/background"
	"github.com/orderlab/orderlab/loadtest/knobs"
	"github.com/orderlab/orderlab/loadtest/lab"
	"github.com/orderlab/orderlab/loadtest/scenario"
	"github.com/orderlab/orderlab/loadtest/scenario/catalog"
)

// The API against the real services, started as the lab runs them (one
// process each, ADMIN_TOKEN set), with small scenarios of their own: a
// long one to stop, a short one to finish. No Prometheus here: the live
// series are checked in e2e against the lab's.

const token = "front-token"

const longYAML = `
name: long
kind: pool
title: a long run to stop
reproduces: a test
question: does Stop put the knobs back?
fix: none
targets: [unbounded, semaphore]
env: {REQUEST_TIMEOUT: 3s, LIMIT_WAIT: 50ms}
phases:
  - name: hold
    request: {path: "/work/db?delay=1ms"}
    load: {mode: closed, concurrency: 2, duration: 60s}
expect:
  - says: answers
    slo: "errors<1%"
panels: [Pool acquire wait p99]
`

const shortYAML = `
name: short
kind: pool
title: a short run to finish
reproduces: a test
question: are the verdicts on the page?
fix: nothing to fix
targets: [unbounded, semaphore]
env: {DB_DELAY: 2ms}
phases:
  - name: orders
    request: {method: POST, path: /orders}
    load: {mode: closed, concurrency: 2, duration: 1s}
expect:
  - target: semaphore
    says: orders succeed
    slo: "errors<1%"
  - target: unbounded
    says: impossible
    slo: "p99<1us"
  - says: read the table
panels: [Pool acquire wait p99]
`

type fixture struct {
	t     *testing.T
	url   string
	admin map[string]string // service -> admin URL
	rates *background.Rates
	srv   *Server
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	bin := t.TempDir()
	cmd := exec.Command("go", "build", "-o", bin+"/", "./services/unbounded", "./services/semaphore")
	cmd.Dir = "../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the services: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	services := []string{"unbounded", "semaphore"}
	running, err := lab.Start(ctx, lab.Config{BinDir: bin, Services: services, Database: pgtest.New(t), LogDir: t.TempDir(),
		Env: map[string]string{"ADMIN_TOKEN": token, "DB_MAX_CONNS": "4", "SHUTDOWN_TIMEOUT": "2s"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = running.Stop() })
	f := &fixture{t: t, admin: map[string]string{}, rates: background.NewRates(4, services...)}
	eps := map[string]scenario.Endpoint{}
	for i, svc := range running.Services {
		admin := strings.TrimSuffix(svc.MetricsURL, "/metrics")
		eps[services[i]] = scenario.Endpoint{URL: svc.URL, MetricsURL: svc.MetricsURL, AdminURL: admin}
		f.admin[services[i]] = admin
	}
	bg := httptest.NewServer(f.rates.Handler(token, nil))
	t.Cleanup(bg.Close)
	var cat []scenario.Scenario
	for _, y := range []string{longYAML, shortYAML} {
		s, err := scenario.Parse([]byte(y))
		if err != nil {
			t.Fatal(err)
		}
		s.Number = len(cat) + 1
		cat = append(cat, s)
	}
	tmc, err := catalog.Get("too-many-clients") // never in the lab
	if err != nil {
		t.Fatal(err)
	}
	cat = append(cat, tmc)
	f.srv, err = New(Config{Catalog: cat, Background: bg.URL, Keep: 2, Log: testLog{t},
		Runner: scenario.Runner{Endpoints: eps, Token: token, Out: t.TempDir(), Pause: 50 * time.Millisecond,
			Board: "http://grafana.test/d/orderlab-pool-starvation"}})
	if err != nil {
		t.Fatal(err)
	}
	page := httptest.NewServer(f.srv)
	t.Cleanup(func() { page.Close(); f.srv.Close() })
	f.url = page.URL
	return f
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// call sends method path with body (JSON unless a string) and decodes the
// answer into out, when given; it returns the status and the raw answer.
func (f *fixture) call(method, path string, body, out any) (int, string) {
	f.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		data, _ := json.Marshal(b)
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, f.url+path, rd)
	if err != nil {
		f.t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(data, out); err != nil {
			f.t.Fatalf("%s %s: %v: %s", method, path, err, data)
		}
	}
	return resp.StatusCode, string(data)
}

func (f *fixture) knobs(service string) map[string]string {
	f.t.Helper()
	v, err := (&knobs.Client{Admin: f.admin[service]}).Get(context.Background())
	if err != nil {
		f.t.Fatal(err)
	}
	return v
}

func (f *fixture) waitRun(id int, what string, cond func(Run) error) Run {
	f.t.Helper()
	var run Run
	poll.Until(f.t, time.Minute, what, func() error {
		if code, body := f.call("GET", fmt.Sprintf("/api/runs/%d", id), nil, &run); code != http.StatusOK {
			return fmt.Errorf("GET run: %d %s", code, body)
		}
		return cond(run)
	})
	return run
}

func TestOneRunAtATimeAndStopPutsTheKnobsBack(t *testing.T) {
	f := newFixture(t)
	before := map[string]map[string]string{"unbounded": f.knobs("unbounded"), "semaphore": f.knobs("semaphore")}

	var run Run
	if code, body := f.call("POST", "/api/runs", startRequest{Scenario: "long", By: "tester"}, &run); code != http.StatusAccepted {
		t.Fatalf("start: %d %s", code, body)
	}
	f.waitRun(run.ID, "the phase under way, with its knobs", func(r Run) error {
		if r.Phase == nil || r.Phase.Name != "hold" || r.Phase.EndsAt.IsZero() {
			return fmt.Errorf("phase %+v", r.Phase)
		}
		return nil
	})
	if got := f.knobs("semaphore"); got["REQUEST_TIMEOUT"] != "3s" || got["LIMIT_WAIT"] != "50ms" {
		t.Errorf("semaphore's knobs during the run: %v, want the scenario's", got)
	}

	code, body := f.call("POST", "/api/runs", startRequest{Scenario: "short"}, nil)
	if code != http.StatusConflict || !strings.Contains(body, "run 1 (1 long) is in progress, started by tester") ||
		!strings.Contains(body, "ending about") {
		t.Errorf("second start: %d %s, want 409 naming the run, who and when it ends", code, body)
	}
	if code, body := f.call("POST", "/api/knobs/reset", nil, nil); code != http.StatusConflict {
		t.Errorf("reset during a run: %d %s, want 409", code, body)
	}
	var listed struct {
		Current *Run
		Runs    []Run
	}
	if f.call("GET", "/api/runs", nil, &listed); listed.Current == nil || listed.Current.ID != run.ID ||
		!strings.Contains(listed.Current.Board, "&to=now&refresh=5s") {
		t.Errorf("GET /api/runs during the run: %+v, want it current with a refreshing board link", listed.Current)
	}

	if code, body := f.call("POST", "/api/runs/current/stop", nil, nil); code != http.StatusAccepted {
		t.Fatalf("stop: %d %s", code, body)
	}
	stopped := f.waitRun(run.ID, "the run stopped", func(r Run) error {
		if r.State != StateStopped {
			return fmt.Errorf("state %s", r.State)
		}
		return nil
	})
	for name, want := range before {
		if got := f.knobs(name); !maps.Equal(got, want) {
			t.Errorf("%s's knobs after Stop: %v, want them back at %v", name, got, want)
		}
	}
	if stopped.Error != "" || stopped.Report == nil || stopped.Board == "" || strings.Contains(stopped.Board, "to=now") {
		t.Errorf("stopped run %+v: want no error, a report and the board on its exact range", stopped)
	}
	if code, body := f.call("POST", "/api/runs/current/stop", nil, nil); code != http.StatusConflict || !strings.Contains(body, "no run in progress") {
		t.Errorf("stop with no run: %d %s, want 409", code, body)
	}
}

func TestARunEndsWithVerdictsAndItsReports(t *testing.T) {
	f := newFixture(t)
	var run Run
	if code, body := f.call("POST", "/api/runs", startRequest{Scenario: "short", Quick: true}, &run); code != http.StatusAccepted {
		t.Fatalf("start: %d %s", code, body)
	}
	if !strings.HasPrefix(run.By, "127.0.0.1:") {
		t.Errorf("by %q, want the remote address when no name is given", run.By)
	}
	done := f.waitRun(run.ID, "the run's end", func(r Run) error {
		if r.State == StateRunning || r.State == StateStopping {
			return fmt.Errorf("state %s", r.State)
		}
		return nil
	})
	if done.State != StateDone || done.Error != "" {
		t.Fatalf("run ended %s: %s", done.State, done.Error)
	}
	marks := map[string]string{}
	for _, v := range done.Verdicts {
		marks[v.Target] = v.Mark
		if v.Mark != scenario.VerdictRead && (len(v.Measured) == 0 || v.SLO == "") {
			t.Errorf("verdict %+v: want the expected and the measured figure", v)
		}
	}
	if marks["semaphore"] != scenario.VerdictMet || marks["unbounded"] != scenario.VerdictMissed || marks["all"] != scenario.VerdictRead {
		t.Errorf("verdicts %+v: want semaphore met, unbounded missed, the third to be read", done.Verdicts)
	}
	if pic := done.Picture; pic == nil || len(pic.Phases) != 1 || len(pic.Phases[0].Models) != 2 || pic.Phases[0].Models[0].Succeeded == 0 ||
		pic.Phases[0].Models[0].P99Target != 1e-6 || !strings.Contains(done.Conclusion, "1 of 2 expectations with a figure were missed") {
		t.Errorf("picture %+v, conclusion %q: want one phase of two models, unbounded's p99 target 1 µs, one of two missed", done.Picture, done.Conclusion)
	}
	if done.Fix != "nothing to fix" || len(done.Explanation) != 3 {
		t.Errorf("fix %q, explanation %q", done.Fix, done.Explanation)
	}
	code, body := f.call("GET", done.Report.HTML, nil, nil)
	if code != http.StatusOK || !strings.Contains(body, "<html") {
		t.Errorf("report HTML: %d %.200s", code, body)
	}
	var res scenario.Result
	if code, body := f.call("GET", done.Report.JSON, nil, &res); code != http.StatusOK || res.Schema != scenario.Schema || !res.Quick {
		t.Errorf("report JSON: %d %.200s", code, body)
	}
	if got := f.knobs("unbounded")["DB_DELAY"]; got != "0s" {
		t.Errorf("DB_DELAY after the run: %s, want it back at 0s", got)
	}

	// Keep 2: the third run's end deletes the first one's reports.
	for range 2 {
		var next Run
		if code, body := f.call("POST", "/api/runs", startRequest{Scenario: "short", Quick: true}, &next); code != http.StatusAccepted {
			t.Fatalf("start: %d %s", code, body)
		}
		f.waitRun(next.ID, "the run's end", func(r Run) error {
			if r.EndedAt == nil {
				return fmt.Errorf("state %s", r.State)
			}
			return nil
		})
	}
	if code, _ := f.call("GET", done.Report.HTML, nil, nil); code != http.StatusNotFound {
		t.Errorf("the first run's report after two more with -keep 2: %d, want 404", code)
	}
}

func TestBadInputIsRefusedAndChangesNothing(t *testing.T) {
	f := newFixture(t)
	before := f.knobs("semaphore")
	for _, tc := range []struct {
		method, path string
		body         any
		status       int
		says         string
	}{
		{"POST", "/api/runs", startRequest{Scenario: "no-such"}, http.StatusNotFound, `no scenario \"no-such\"`},
		{"POST", "/api/runs", startRequest{Scenario: "too-many-clients"}, http.StatusUnprocessableEntity, "cannot be staged in the running lab"},
		{"POST", "/api/runs", `{"scenario": "short", "fast": true}`, http.StatusBadRequest, "unknown field"},
		{"POST", "/api/runs", `not json`, http.StatusBadRequest, "want {"},
		{"POST", "/api/runs/current/stop", nil, http.StatusConflict, "no run in progress"},
		{"GET", "/api/runs/7", nil, http.StatusNotFound, "no run 7"},
		{"GET", "/api/runs/7/report.html", nil, http.StatusNotFound, "no run 7"},
		{"PATCH", "/api/knobs/semaphore", map[string]string{"LIMIT_WAIT": "soon", "REQUEST_TIMEOUT": "5s"}, http.StatusBadRequest, "LIMIT_WAIT"},
		{"PATCH", "/api/knobs/semaphore", map[string]string{"NO_SUCH_KNOB": "1"}, http.StatusBadRequest, "unknown knob"},
		{"PATCH", "/api/knobs/semaphore", map[string]string{"HTTP_SERVER": "nbio"}, http.StatusConflict, "needs a restart"},
		{"PATCH", "/api/knobs/semaphore", `{"DB_MAX_CONNS": 5}`, http.StatusBadRequest, "values as strings"},
		{"PATCH", "/api/knobs/nosuch", map[string]string{"DB_MAX_CONNS": "5"}, http.StatusNotFound, `no service \"nosuch\"`},
		{"PUT", "/api/background", map[string]float64{"unbounded": -1}, http.StatusBadRequest, "nothing was changed"},
		{"PUT", "/api/background", map[string]float64{"nosuch": 1}, http.StatusBadRequest, `no target \"nosuch\"`},
		{"GET", "/api/runs/1/series", nil, http.StatusNotFound, "no run 1"},
		{"DELETE", "/api/knobs", nil, http.StatusNotFound, "no such API endpoint"},
	} {
		code, body := f.call(tc.method, tc.path, tc.body, nil)
		if code != tc.status || !strings.Contains(body, tc.says) {
			t.Errorf("%s %s %v: %d %s, want %d saying %q", tc.method, tc.path, tc.body, code, body, tc.status, tc.says)
		}
	}
	if got := f.knobs("semaphore"); !maps.Equal(got, before) {
		t.Errorf("knobs after the refusals: %v, want them unchanged %v", got, before)
	}
	if got := f.rates.All(); got["unbounded"] != 4 || got["semaphore"] != 4 {
		t.Errorf("background rates after the refusals: %v", got)
	}
	var list struct{ Runs []Run }
	if f.call("GET", "/api/runs", nil, &list); len(list.Runs) != 0 {
		t.Errorf("runs after the refusals: %+v", list.Runs)
	}
}

func TestKnobsBackgroundAndResetGoThroughTheServices(t *testing.T) {
	f := newFixture(t)
	var all map[string]struct {
		Knobs map[string]struct {
			Value, Default, Range string
			Live                  bool
		}
		Error string
	}
	if code, body := f.call("GET", "/api/knobs", nil, &all); code != http.StatusOK || all["semaphore"].Knobs["LIMIT_WAIT"].Range == "" ||
		all["semaphore"].Knobs["ADMIN_TOKEN"].Value != "set" {
		t.Fatalf("GET /api/knobs: %d %.300s", code, body)
	}
	if code, body := f.call("PATCH", "/api/knobs/semaphore", map[string]string{"LIMIT_WAIT": "20ms", "DB_DELAY": "1ms"}, nil); code != http.StatusOK {
		t.Fatalf("PATCH: %d %s", code, body)
	}
	if got := f.knobs("semaphore"); got["LIMIT_WAIT"] != "20ms" || got["DB_DELAY"] != "1ms" {
		t.Errorf("semaphore's knobs after the PATCH: %v", got)
	}
	var reset struct{ Changed map[string]map[string]string }
	if code, body := f.call("POST", "/api/knobs/reset", nil, &reset); code != http.StatusOK {
		t.Fatalf("reset: %d %s", code, body)
	}
	// The services ran with DB_MAX_CONNS=4 and SHUTDOWN_TIMEOUT=2s: those
	// stay as the services started, the two changed go back to their
	// defaults, and LIMIT (unset) follows DB_MAX_CONNS.
	want := map[string]string{"LIMIT_WAIT": "100ms", "DB_DELAY": "0s", "DB_MAX_CONNS": "4", "SHUTDOWN_TIMEOUT": "2s", "LIMIT": "4"}
	got := f.knobs("semaphore")
	for k, v := range want {
		if !knobs.Same(got[k], v) {
			t.Errorf("semaphore %s after the reset: %q, want %q as at start (reset changed %v)", k, got[k], v, reset.Changed)
		}
	}
	if ch := reset.Changed["semaphore"]; len(ch) != 2 || !knobs.Same(ch["LIMIT_WAIT"], "100ms") || !knobs.Same(ch["DB_DELAY"], "0s") {
		t.Errorf("reset answered %v, want LIMIT_WAIT and DB_DELAY with the values they went back to", ch)
	}
	var again struct{ Changed map[string]map[string]string }
	if f.call("POST", "/api/knobs/reset", nil, &again); len(again.Changed["semaphore"])+len(again.Changed["unbounded"]) != 0 {
		t.Errorf("a second reset changed %v, want nothing", again.Changed)
	}

	var rates map[string]float64
	if code, body := f.call("GET", "/api/background", nil, &rates); code != http.StatusOK || rates["semaphore"] != 4 {
		t.Fatalf("GET /api/background: %d %s", code, body)
	}
	if code, body := f.call("PUT", "/api/background", map[string]float64{"semaphore": 0}, &rates); code != http.StatusOK || rates["semaphore"] != 0 {
		t.Fatalf("PUT /api/background: %d %s", code, body)
	}
	if got := f.rates.All(); got["semaphore"] != 0 || got["unbounded"] != 4 {
		t.Errorf("background rates after PUT {semaphore: 0}: %v", got)
	}
}

func TestThePageIsServedFromTheBinary(t *testing.T) {
	srv := offlineServer(t)
	for path, want := range map[string]string{"/": `<script src="app.js"`, "/app.js": "/api/runs", "/style.css": "@media",
		"/echarts.min.js": "echarts"} {
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), want) {
			t.Errorf("GET %s: %d, want %q in it", path, rec.Code, want)
		}
		if strings.Contains(rec.Body.String(), "https://cdn") {
			t.Errorf("GET %s loads from a CDN", path)
		}
	}
}

// TestTheCatalogHasNoNullLists: the page reads every list of every entry
// (a tasks-only scenario names no panels).
func TestTheCatalogHasNoNullLists(t *testing.T) {
	all, err := catalog.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		data, err := json.Marshal(entryOf(s))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), "null") {
			t.Errorf("%s: %s", s.Name, data)
		}
	}
}

// TestAnotherSiteCannotDriveTheAPI: the API takes no credential, so a page
// of another site open in the user's browser must not start a run, stop one
// or reset the knobs; the page itself (same origin) and curl (no browser
// headers) reach the handler, which answers their bad request 404.
func TestAnotherSiteCannotDriveTheAPI(t *testing.T) {
	srv := offlineServer(t)
	for _, c := range []struct {
		name   string
		header map[string]string
		want   int
	}{
		{"another site", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://example.com"}, http.StatusForbidden},
		{"an old browser on another site", map[string]string{"Origin": "https://example.com"}, http.StatusForbidden},
		{"the page", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "http://127.0.0.1:8080"}, http.StatusNotFound},
		{"curl", nil, http.StatusNotFound},
	} {
		req := httptest.NewRequest("POST", "http://127.0.0.1:8080/api/runs", strings.NewReader(`{"scenario":"nope"}`))
		req.Header.Set("Content-Type", "text/plain")
		for k, v := range c.header {
			req.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code != c.want {
			t.Errorf("%s: POST /api/runs answered %d, want %d", c.name, rec.Code, c.want)
		}
	}
}

// TestAStoppedRunKeepsWhatWentWrongBesidesTheStop: the runner joins the
// Stop's cancel with any knob it could not put back; the run shows the
// latter and nothing for the Stop alone.
func TestAStoppedRunKeepsWhatWentWrongBesidesTheStop(t *testing.T) {
	restore := errors.New("putting LIMIT back on semaphore: 503")
	phase := fmt.Errorf("phase orders: %w", context.Canceled)
	if err := withoutCancel(errors.Join(phase, errors.Join(nil, context.Canceled))); err != nil {
		t.Errorf("a stop alone: %v, want nil", err)
	}
	if err := withoutCancel(errors.Join(phase, restore)); err == nil || err.Error() != restore.Error() {
		t.Errorf("a stop and a failed restore: %v, want %v", err, restore)
	}
	if err := withoutCancel(restore); err != restore {
		t.Errorf("no stop: %v, want %v", err, restore)
	}
}

// offlineServer is a page with one scenario and one service it never
// reaches: enough for what is answered before any service is asked.
func offlineServer(t *testing.T) *Server {
	t.Helper()
	srv, err := New(Config{Catalog: []scenario.Scenario{{Name: "x"}}, Runner: scenario.Runner{Out: t.TempDir(),
		Endpoints: map[string]scenario.Endpoint{"unbounded": {AdminURL: "http://127.0.0.1:1"}}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}
