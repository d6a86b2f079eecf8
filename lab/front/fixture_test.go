package front

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/orderlab/orderlab/internal/faultproxy"
	"github.com/orderlab/orderlab/internal/pgtest"
	"github.com/orderlab/orderlab/internal/poll"
	"github.com/orderlab/orderlab/lab/background"
	"github.com/orderlab/orderlab/lab/dbproxy"
	"github.com/orderlab/orderlab/lab/front/api"
	"github.com/orderlab/orderlab/lab/knobs"
	"github.com/orderlab/orderlab/lab/local"
	"github.com/orderlab/orderlab/lab/scenario"
	"github.com/orderlab/orderlab/lab/scenario/catalog"
	"github.com/orderlab/orderlab/lab/scenario/runner"
	"github.com/orderlab/orderlab/lab/scenario/setup"
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
    bound: {concurrency: 4, hold: 2ms, what: "pool 4 / 2 ms"}
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

// newFixture is the page against unbounded and semaphore (pools of 4),
// with the two small scenarios and too-many-clients, which the lab cannot
// run.
func newFixture(t *testing.T) *fixture {
	t.Helper()
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
	return startFixture(t, fixtureConfig{services: []string{"unbounded", "semaphore"}, catalog: append(cat, tmc),
		env: map[string]string{"DB_MAX_CONNS": "4"}})
}

type fixtureConfig struct {
	services []string
	env      map[string]string // besides ADMIN_TOKEN and SHUTDOWN_TIMEOUT
	catalog  []scenario.Scenario
	// proxy puts the lab's database proxy (lab dbproxy's) between the
	// services and Postgres, for the scenarios that set db_latency or
	// db_stop.
	proxy bool
}

// startFixture builds and starts cfg's services as the lab runs them, a
// background load's rate listener, and the page.
func startFixture(t *testing.T, cfg fixtureConfig) *fixture {
	t.Helper()
	bin := t.TempDir()
	args := []string{"build", "-o", bin + "/"}
	for _, svc := range cfg.services {
		args = append(args, "./services/"+svc)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = "../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the services: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	// A server of the services' own, sized as the lab's is (compose.yaml's
	// max_connections): at full size three pools, each beside the one it
	// replaces while a knob changes, want more connections than a server
	// shared with the other packages' tests can spare.
	db := pgtest.NewOn(t, pgtest.NewCluster(t, "max_connections=200").URL)
	lab := setup.Lab{Token: token, Endpoints: map[string]setup.Endpoint{}}
	r := runner.Runner{Out: t.TempDir(), Pause: 50 * time.Millisecond, Board: "http://grafana.test/d/orderlab-pool-starvation"}
	servicesDB := db
	if cfg.proxy {
		servicesDB, lab.DBProxy = startProxy(t, db)
	}
	env := map[string]string{"ADMIN_TOKEN": token, "SHUTDOWN_TIMEOUT": "2s"}
	maps.Copy(env, cfg.env)
	running, err := local.Start(ctx, local.Config{BinDir: bin, Services: cfg.services, Database: servicesDB, LogDir: t.TempDir(), Env: env})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = running.Stop() })
	f := &fixture{t: t, admin: map[string]string{}, rates: background.NewRates(4, cfg.services...)}
	for i, svc := range running.Services {
		admin := strings.TrimSuffix(svc.MetricsURL, "/metrics")
		lab.Endpoints[cfg.services[i]] = setup.Endpoint{URL: svc.URL, MetricsURL: svc.MetricsURL, AdminURL: admin}
		f.admin[cfg.services[i]] = admin
	}
	bg := httptest.NewServer(f.rates.Handler(token, nil))
	t.Cleanup(bg.Close)
	f.srv, err = New(Config{Catalog: cfg.catalog, Background: bg.URL, Keep: 2, Log: testLog{t}, Runner: r, Lab: lab})
	if err != nil {
		t.Fatal(err)
	}
	page := httptest.NewServer(f.srv)
	t.Cleanup(func() { page.Close(); f.srv.Close() })
	f.url = page.URL
	return f
}

// startProxy puts a fault proxy, driven by lab dbproxy's control API,
// in front of db's server: it returns db's URL through the proxy, for the
// services, and the proxy as the runner reaches it (db itself for the
// ledger check of db_stop).
func startProxy(t *testing.T, db string) (string, *setup.LabProxy) {
	t.Helper()
	u, err := url.Parse(db)
	if err != nil {
		t.Fatal(err)
	}
	px, err := faultproxy.New(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(px.Close)
	control := httptest.NewServer(dbproxy.NewServer(px))
	t.Cleanup(control.Close)
	u.Host = px.Addr
	return u.String(), &setup.LabProxy{Control: &dbproxy.Client{URL: control.URL}, Host: px.Addr, Database: db}
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

func (f *fixture) waitRun(id int, what string, cond func(api.Run) error) api.Run {
	f.t.Helper()
	return f.waitRunWithin(id, time.Minute, what, cond)
}

// waitRunWithin polls run id until cond holds, for at most within.
func (f *fixture) waitRunWithin(id int, within time.Duration, what string, cond func(api.Run) error) api.Run {
	f.t.Helper()
	var run api.Run
	poll.Until(f.t, within, what, func() error {
		if code, body := f.call("GET", fmt.Sprintf("/api/runs/%d", id), nil, &run); code != http.StatusOK {
			return fmt.Errorf("GET run: %d %s", code, body)
		}
		return cond(run)
	})
	return run
}

// offlineServer is a page with one scenario and one service it never
// reaches: enough for what is answered before any service is asked.
func offlineServer(t *testing.T) *Server {
	t.Helper()
	srv, err := New(Config{Catalog: []scenario.Scenario{{Name: "x"}}, Runner: runner.Runner{Out: t.TempDir()},
		Lab: setup.Lab{Endpoints: map[string]setup.Endpoint{"unbounded": {AdminURL: "http://127.0.0.1:1"}}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}
