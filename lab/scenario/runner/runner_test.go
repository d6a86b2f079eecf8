package runner

import (
	"cmp"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/orderlab/orderlab/internal/pgtest"
	"github.com/orderlab/orderlab/lab/scenario"
	"github.com/orderlab/orderlab/lab/scenario/setup"
	"github.com/orderlab/orderlab/loadtest/attack"
)

// buildServices builds the three services into a temporary directory.
func buildServices(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("go", "build", "-o", dir+"/", "./services/unbounded", "./services/semaphore", "./services/pipeline")
	cmd.Dir = "../../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the services: %v\n%s", err, out)
	}
	return dir
}

// TestRunnerContinuesAndRepeats runs a two-phase scenario twice over
// (Count 2), its second phase continuing on the first phase's service: the
// continued run finds the orders of the run before it in the same process
// and the pool size its env set live, each phase holds two runs of the target, and the table quotes their
// median and range.
func TestRunnerContinuesAndRepeats(t *testing.T) {
	bin := buildServices(t)
	s, err := scenario.Parse([]byte(`
name: continue-test
title: a phase that continues on the services of the one before
reproduces: nothing; a test of the runner
question: does the second phase run on the first phase's service?
targets: [semaphore]
env: {LIMIT: adaptive, DB_MAX_CONNS: "5"}
phases:
  - name: first
    request: {method: POST, path: "/orders?db_delay=1ms"}
    load: {mode: closed, concurrency: 4, requests: 40}
  - name: second
    continue: true
    env: {DB_MAX_CONNS: "3"}
    request: {method: POST, path: "/orders?db_delay=1ms"}
    load: {mode: closed, concurrency: 4, requests: 40, retry: immediate}
panels: [Throughput]
`))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	r := &Runner{Mode: setup.Local{BinDir: bin, DatabaseURL: pgtest.BaseURL()}, Out: t.TempDir(), Quick: true, Count: 2, Log: testWriter{t}}
	res, files, err := r.Run(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if res.Count != 2 || len(res.Phases) != 2 {
		t.Fatalf("count %d, %d phases; want 2 and 2", res.Count, len(res.Phases))
	}
	for _, p := range res.Phases {
		if runs := p.Loadtest.Runs; len(runs) != 2 || runs[0].Succeeded != 40 || runs[1].Succeeded != 40 {
			t.Errorf("phase %s: %d runs, want two of 40 orders each", p.Name, len(runs))
		}
	}
	for i, run := range res.Phases[1].Loadtest.Runs {
		first := run.Server.Samples[0]
		if first.Orders < 40 || first.Limit == 0 {
			t.Errorf("repetition %d: the continued run's first scrape saw %v orders and limit %v: want the 40 of the phase before, on the same adaptive limiter",
				i+1, first.Orders, first.Limit)
		}
		if first.PoolMax != 3 {
			t.Errorf("repetition %d: the continued run's first scrape saw a pool of %v: want the 3 its env set live", i+1, first.PoolMax)
		}
	}
	if first := res.Phases[0].Loadtest.Runs[1].Server.Samples[0]; first.Orders != 0 {
		t.Errorf("the second repetition's first phase started on a used service (%v orders): want a fresh one", first.Orders)
	}
	md, err := os.ReadFile(files.Markdown)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Median of 2 runs", "| semaphore | ", "COUNT=2", "on the services of the phase before"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// TestConfigOfFillsWhatTheLoadLeavesOut: a phase's load gets the defaults
// of the loadtest command (attack.Defaults) for what it does not set, and
// its own values for the rest.
func TestConfigOfFillsWhatTheLoadLeavesOut(t *testing.T) {
	no := false
	for _, c := range []struct {
		name string
		p    scenario.Phase
		want attack.Config
	}{
		{"burst, defaults", scenario.Phase{Request: &scenario.Request{Path: "/work/api?delay=200ms"}, Load: &scenario.Load{Mode: "burst", Concurrency: 100}},
			attack.Config{Mode: attack.ModeBurst, Concurrency: 100, Timeout: 30 * time.Second, Retries: 5, Warmup: true}},
		{"burst, set", scenario.Phase{Request: &scenario.Request{Path: "/work/api"}, Load: &scenario.Load{Mode: "burst", Concurrency: 10, Timeout: scenario.Duration(time.Second), Retries: 2, Warmup: &no}},
			attack.Config{Mode: attack.ModeBurst, Concurrency: 10, Timeout: time.Second, Retries: 2}},
		{"closed by requests alone", scenario.Phase{Request: &scenario.Request{Method: "POST", Path: "/orders"}, Load: &scenario.Load{Mode: "closed", Concurrency: 7, Requests: 200, Retries: 3}},
			attack.Config{Mode: attack.ModeClosed, Concurrency: 7, Requests: 200, Timeout: 30 * time.Second, Retries: 3}},
		{"closed honouring Retry-After", scenario.Phase{Request: &scenario.Request{Method: "POST", Path: "/orders"}, Load: &scenario.Load{Mode: "closed", Concurrency: 7, Duration: scenario.Duration(time.Second), Retry: "honor", RetryMaxWait: scenario.Duration(2 * time.Second)}},
			attack.Config{Mode: attack.ModeClosed, Concurrency: 7, Duration: time.Second, Timeout: 30 * time.Second, Retries: 5, Retry: attack.RetryHonor, RetryMaxWait: 2 * time.Second}},
		{"open ramp", scenario.Phase{Request: &scenario.Request{Path: "/work/db"}, Load: &scenario.Load{Mode: "open", Concurrency: 9, Duration: scenario.Duration(time.Second), Rate: 100, RampFrom: 10, Ramp: scenario.Duration(time.Second)}},
			attack.Config{Mode: attack.ModeOpen, Concurrency: 9, Duration: time.Second, Timeout: 30 * time.Second, Retries: 5,
				Pacer: attack.RampPacer{From: 10, To: 100, Ramp: time.Second}}},
	} {
		got := scenario.ConfigOf(c.p, "http://127.0.0.1:1/")
		if got.Target.URL != "http://127.0.0.1:1"+c.p.Request.Path || got.Client != attack.ClientFast ||
			(got.Target.Method == "POST") != (got.Target.Body != nil) || got.Target.Method != cmp.Or(c.p.Request.Method, "GET") {
			t.Errorf("%s: target %+v, client %q", c.name, got.Target, got.Client)
		}
		if got.Mode != c.want.Mode || got.Concurrency != c.want.Concurrency || got.Requests != c.want.Requests ||
			got.Duration != c.want.Duration || got.Timeout != c.want.Timeout || got.Retries != c.want.Retries ||
			got.Warmup != c.want.Warmup || got.Pacer != c.want.Pacer ||
			got.Retry != cmp.Or(c.want.Retry, attack.RetryNone) || got.RetryMaxWait != cmp.Or(c.want.RetryMaxWait, 10*time.Second) {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}
