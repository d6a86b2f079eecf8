//go:build labcheck

package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orderlab/orderlab/internal/pgtest"
	"github.com/orderlab/orderlab/lab/scenario"
	"github.com/orderlab/orderlab/lab/scenario/render"
	"github.com/orderlab/orderlab/lab/scenario/result"
	"github.com/orderlab/orderlab/lab/scenario/setup"
)

// runCatalogQuick runs the catalog scenario name in quick mode with the
// services in bin, against targets when given (else the scenario's own),
// and returns its result.
func runCatalogQuick(t *testing.T, bin, name string, targets ...string) *result.Result {
	t.Helper()
	data, err := os.ReadFile("../catalog/" + name + ".yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := scenario.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(targets) > 0 {
		s.Targets = targets
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	r := &Runner{Mode: setup.Local{BinDir: bin, DatabaseURL: pgtest.BaseURL()}, Out: t.TempDir(), Quick: true, Log: testWriter{t}}
	logProblemsOnFailure(t, r.Out)
	res, _, err := r.Run(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestRunnerRunsAQuickScenarioEndToEnd starts the three real services
// against a scenario database on the real Postgres, runs pool-starvation in
// quick mode (POST /orders through the pool, the semaphore and the
// pipeline), and checks the JSON, Markdown and HTML it wrote; then opens the
// HTML in headless Chromium and checks that every chart rendered.
func TestRunnerRunsAQuickScenarioEndToEnd(t *testing.T) {
	bin := buildServices(t)
	data, err := os.ReadFile("../catalog/pool-starvation.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := scenario.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	s.Phases = s.Phases[:1] // the harsher profile adds nothing this test checks, only time
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	out := t.TempDir()
	r := &Runner{Mode: setup.Local{BinDir: bin, DatabaseURL: pgtest.BaseURL()}, Out: out, Quick: true, Log: testWriter{t}}
	res, files, err := r.Run(ctx, s)
	if err != nil {
		t.Fatal(err)
	}

	f, err := os.Open(files.JSON)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var back result.Result
	if err := json.NewDecoder(f).Decode(&back); err != nil {
		t.Fatal(err)
	}
	if back.Schema != result.Schema || !back.Quick || len(back.Phases) != 1 || back.Phases[0].Loadtest == nil {
		t.Fatalf("JSON: schema %q quick %v phases %d", back.Schema, back.Quick, len(back.Phases))
	}
	if env := back.Phases[0].Env; env["DB_MAX_CONNS"] != "5" || env["REQUEST_TIMEOUT"] != "2s" {
		t.Errorf("JSON env = %v, want the scenario's knobs, pools capped at 5 (quick)", env)
	}
	runs := back.Phases[0].Loadtest.Runs
	if len(runs) != 3 {
		t.Fatalf("JSON has %d runs, want one per service", len(runs))
	}
	for i, want := range []string{"unbounded", "semaphore", "pipeline"} {
		r := runs[i]
		if r.Name != want || r.Succeeded == 0 || r.Status["201"] == 0 {
			t.Errorf("run %d: %s with %d successes, status %v; want %s with 201s", i, r.Name, r.Succeeded, r.Status, want)
		}
		if r.Server == nil || len(r.Server.Samples) < 3 || r.Server.PeakGoroutines == 0 || r.Server.Samples[len(r.Server.Samples)-1].Orders == 0 {
			t.Errorf("%s: want several metric samples with goroutines and committed orders, got %+v", r.Name, r.Server)
		}
	}
	if res.Phases[0].BoundRPS != 100 {
		t.Errorf("bound = %v, want the quick pool's 5 / 50 ms = 100", res.Phases[0].BoundRPS)
	}

	md, err := os.ReadFile(files.Markdown)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| service | time | rps | goodput | of bound |", "| unbounded |", "| pipeline |", "make scenario NAME=pool-starvation QUICK=1", "**100/s**", "500 clients POST orders that hold a connection 50 ms, pool 5"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
	html, err := os.ReadFile(files.HTML)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(html), "<script src=") || strings.Contains(string(html), "go-echarts.github.io") {
		t.Error("the HTML links a script: it must inline ECharts and work offline")
	}
	charts := checkChartsRender(t, files.HTML, strings.TrimSuffix(files.HTML, ".html")+".png")
	if charts < 10 {
		t.Errorf("%d charts rendered, want the percentiles and every metric over time", charts)
	}
	if _, err := os.Stat(filepath.Join(out, s.Name)); err != nil {
		t.Error(err)
	}
}

// TestRunnerScrapesABurstAtItsPeak: burst-1000 (quick: 250 requests of
// 200 ms) scrapes every 25 ms, so the server's peak of requests in flight
// is among its samples; at the default 250 ms the burst fell between the
// scrape at its release and the one after its last answer.
func TestRunnerScrapesABurstAtItsPeak(t *testing.T) {
	res := runCatalogQuick(t, buildServices(t), "burst-1000", "unbounded")
	run := res.Phases[0].Loadtest.Runs[0]
	if run.Server == nil || run.Server.PeakInFlight < 40 || run.Server.PeakGoroutines < 50 {
		t.Errorf("server during a burst of 250: %+v; want a sample with at least 40 requests in flight and a goroutine each", run.Server)
	}
}

// TestRunnerRunsInProcessTasks runs the quick hundred-thousand-tasks
// scenario, which starts no service.
func TestRunnerRunsInProcessTasks(t *testing.T) {
	data, err := os.ReadFile("../catalog/hundred-thousand-tasks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := scenario.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	r := &Runner{Mode: setup.Local{}, Out: t.TempDir(), Quick: true}
	res, files, err := r.Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Phases) != 3 {
		t.Fatalf("%d phases", len(res.Phases))
	}
	g, p8 := res.Phases[0].Tasks, res.Phases[1].Tasks
	if g.Jobs != 1000 || g.PeakGoroutines < 500 {
		t.Errorf("goroutines phase: %+v, want 1000 jobs on about as many goroutines", g)
	}
	// 128 jobs of 50 ms on 8 workers: 16 rounds, 0.8 s; scaled to 100,000: 625 s.
	if p8.Jobs != 128 || p8.ElapsedSeconds < 0.8 || p8.ScaledSeconds < 625 || p8.BoundSeconds != 625 {
		t.Errorf("pool-8 phase: %+v, want 128 jobs in >= 0.8 s, scaled and bound 625 s", p8)
	}
	if _, err := os.Stat(files.HTML); err != nil {
		t.Error(err)
	}
	// Go's scheduler saw the goroutine per job park its sleeping jobs
	// (waiting, about one goroutine each) and the pool of 8 only its
	// workers (the test binary's other goroutines wait in both); the
	// report has the table of what it saw for every phase.
	if g.PeakWaiting < float64(g.Jobs)/2 || g.Latencies == 0 {
		t.Errorf("a goroutine per sleeping job: %+v; want about %d waiting and the run's scheduling latency", g.Scheduler, g.Jobs)
	}
	if p8.PeakWaiting < 8 || g.PeakWaiting-p8.PeakWaiting < float64(g.Jobs)/2 {
		t.Errorf("a pool of 8: %+v; want its 8 workers waiting, about %d fewer than a goroutine per job (%v)", p8.Scheduler, g.Jobs, g.PeakWaiting)
	}
	reportSaysWhatTheSchedulerSaw(t, res, "| goroutines (one per job) |", "| pool of 8 workers |")
	if l := render.SchedulerLine(s); strings.Contains(l, "board") {
		t.Errorf("an in-process scenario, which the board does not see, points to it: %q", l)
	}
}

// logProblemsOnFailure prints the services' WARN and ERROR lines from the
// runs' log directories under out when the test has failed: an answer of
// 500 (a bug, logged by the service) then shows its cause. Registered after
// out's t.TempDir, it runs before the directory is removed.
func logProblemsOnFailure(t *testing.T, out string) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		_ = filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".log") {
				return nil
			}
			f, err := os.Open(path)
			if err != nil {
				return nil
			}
			defer f.Close()
			sc := bufio.NewScanner(f)
			sc.Buffer(make([]byte, 64<<10), 1<<20)
			for n := 0; sc.Scan() && n < 40; {
				if l := sc.Text(); strings.Contains(l, `"level":"ERROR"`) || strings.Contains(l, `"level":"WARN"`) {
					t.Logf("%s: %s", filepath.Base(path), l)
					n++
				}
			}
			return nil
		})
	})
}
