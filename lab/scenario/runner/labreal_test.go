package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orderlab/orderlab/internal/pgdb"
	"github.com/orderlab/orderlab/internal/pgtest"
	"github.com/orderlab/orderlab/lab/knobs"
	"github.com/orderlab/orderlab/lab/local"
	"github.com/orderlab/orderlab/lab/scenario"
	"github.com/orderlab/orderlab/lab/scenario/result"
	"github.com/orderlab/orderlab/lab/scenario/setup"
	"github.com/orderlab/orderlab/loadtest/annotate"
)

// labEnv are the knobs the three services run with here, as the lab's
// compose.yaml starts them where they matter below.
var labEnv = map[string]string{"DB_MAX_CONNS": "20", "REQUEST_TIMEOUT": "30s", "DB_DELAY": "0s", "ADMIN_TOKEN": "lab-token"}

// realYAML sets knobs that the API applies per request (live in every
// build); the pool, the limit and the workers are live once the models'
// setters are in (docs/lab-scenarios.md).
const realYAML = `
name: lab-real
title: orders with a 2 s deadline and 5 ms more per order
reproduces: a test
question: do the real services take the phase's knobs and give them back?
targets: [unbounded, semaphore, pipeline]
env: {REQUEST_TIMEOUT: 2s, DB_DELAY: 5ms}
phases:
  - name: orders
    request: {method: POST, path: /orders}
    load: {mode: closed, concurrency: 4, duration: 1s}
expect:
  - says: orders succeed
    slo: "errors<1%"
  - target: pipeline
    says: half its orders fail (they do not, a miss that keeps its flight recorder window)
    slo: "errors>50%"
panels: [Pool acquire wait p99]
`

// TestLabRunAgainstTheRealServices runs a scenario on the three real
// services running side by side with the lab's knobs: the runner changes
// their knobs through their own knob API, their knob gauges during the run
// show the scenario's values, and every knob is back at the lab's value
// afterwards; the pipeline's miss keeps its flight recorder's window, read
// from its admin listener.
func TestLabRunAgainstTheRealServices(t *testing.T) {
	bin := buildServices(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	db, err := pgdb.Create(ctx, pgtest.BaseURL(), "orderlab_scn_lab_real")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Drop(context.WithoutCancel(ctx)) }()
	running, err := local.Start(ctx, local.Config{BinDir: bin, Services: scenario.Services, Env: labEnv, Database: db.URL, LogDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = running.Stop() }()
	eps := map[string]setup.Endpoint{}
	for i, svc := range running.Services {
		eps[scenario.Services[i]] = setup.Endpoint{URL: svc.URL, MetricsURL: svc.MetricsURL, AdminURL: strings.TrimSuffix(svc.MetricsURL, "/metrics")}
	}
	g := newFakeGrafana(t)
	client, err := annotate.New(g.URL)
	if err != nil {
		t.Fatal(err)
	}
	s, err := scenario.Parse([]byte(realYAML))
	if err != nil {
		t.Fatal(err)
	}
	r := &Runner{Mode: &setup.Lab{Endpoints: eps, Token: "lab-token"}, Annotate: client, Board: "http://grafana.test/d/x",
		Out: t.TempDir(), Pause: 100 * time.Millisecond, Log: testWriter{t}}
	res, files, err := r.Run(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range res.Phases[0].Loadtest.Runs {
		ss := run.Server.Samples
		if len(ss) == 0 {
			t.Fatalf("%s: no samples", run.Name)
		}
		k := ss[len(ss)-1].Knobs
		if k["REQUEST_TIMEOUT"] != 2 || k["DB_DELAY"] != 0.005 {
			t.Errorf("%s: knob gauges during the run %v, want REQUEST_TIMEOUT 2 and DB_DELAY 0.005", run.Name, k)
		}
		if run.Succeeded == 0 {
			t.Errorf("%s: no order succeeded", run.Name)
		}
	}
	for name, ep := range eps {
		kc := &knobs.Client{Admin: ep.AdminURL}
		want := map[string]string{"REQUEST_TIMEOUT": "30s", "DB_DELAY": "0s"}
		if err := kc.Wait(ctx, want, 5*time.Second); err != nil {
			t.Errorf("%s after the run: %v", name, err)
		}
	}
	if marks := g.done(); len(marks) != 1 || marks[0].End == 0 || !strings.Contains(marks[0].Text, "lab-real") {
		t.Errorf("annotations = %+v, want one region for the phase", marks)
	}
	if v := result.Verdicts(res); len(v) != 2 || !strings.HasPrefix(v[0], "MET") || !strings.HasPrefix(v[1], "MISSED pipeline") {
		t.Errorf("verdicts %q", v)
	}
	snaps := res.Phases[0].Snapshots
	if len(snaps) != 1 || snaps[0].Target != "pipeline" || snaps[0].Err != "" {
		t.Fatalf("snapshots %+v, want the pipeline's", snaps)
	}
	if b, err := os.ReadFile(filepath.Join(filepath.Dir(files.JSON), snaps[0].File)); err != nil || !isTrace(b) {
		t.Errorf("the pipeline's window %s: %v, want an execution trace", snaps[0].File, err)
	}
}
