package front

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
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
