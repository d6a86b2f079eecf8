//go:build labcheck

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/orderlab/orderlab/internal/cli"
	"github.com/orderlab/orderlab/internal/poll"
	"github.com/orderlab/orderlab/internal/proc"
	"github.com/orderlab/orderlab/lab/diagnose"
)

// TestDiagnoseAgainstPrometheus runs lab diagnose against a real
// Prometheus that loads testdata/pitfall-rules.yml and scrapes a gauge the
// test sets: nothing firing (exit 0), the pitfall firing (exit 1, its
// finding in JSON and in text, the pending rule named as pending only, the
// symptom rule not at all), resolved (exit 0 again), and Prometheus
// stopped (exit 2).
func TestDiagnoseAgainstPrometheus(t *testing.T) {
	bin := prometheusBin(t)
	var signal atomic.Uint64 // the gauge's float64 bits
	metrics := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Prometheus 3 refuses a scrape without a known Content-Type.
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		fmt.Fprintf(w, "# TYPE orderlab_test_signal gauge\norderlab_test_signal %g\n", math.Float64frombits(signal.Load()))
	}))
	defer metrics.Close()
	prom, promURL := startTestPrometheus(t, bin, strings.TrimPrefix(metrics.URL, "http://"))

	// diagnose runs the mode as a user does, until its exit code is want.
	diagnoseUntil := func(what string, want int, args ...string) (stdout string) {
		t.Helper()
		poll.Until(t, 2*time.Minute, what, func() error {
			code, out, errOut := runCLI(t, append([]string{"diagnose", "-prometheus", promURL}, args...)...)
			stdout = out
			if code != want {
				return fmt.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			return nil
		})
		return stdout
	}

	// Calm: two pitfall rules loaded, none firing.
	out := diagnoseUntil("no pitfall", cli.ExitOK)
	if want := "no pitfall: none of the 2 pitfall rules that " + promURL + " loads fires\n"; out != want {
		t.Errorf("calm: stdout %q, want %q", out, want)
	}

	t0 := time.Now().UTC().Truncate(time.Second)
	signal.Store(math.Float64bits(1.8))
	out = diagnoseUntil("pool-starvation firing", cli.ExitFail, "-json")
	var got struct {
		Findings []struct {
			Pitfall  string              `json:"pitfall"`
			Service  string              `json:"service"`
			Since    string              `json:"since"`
			Evidence []diagnose.Evidence `json:"evidence"`
			Page     string              `json:"page"`
		} `json:"findings"`
	}
	var keys struct{ Findings []map[string]any }
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("-json: %v\n%s", err, out)
	}
	if err := json.Unmarshal([]byte(out), &keys); err != nil || len(got.Findings) != 1 || len(keys.Findings[0]) != 5 {
		t.Fatalf("-json: want the one pitfall firing, with pitfall, service, since, evidence and page, got\n%s", out)
	}
	f := got.Findings[0]
	since, err := time.Parse(time.RFC3339, f.Since)
	if f.Pitfall != "pool-starvation" || f.Service != "unbounded" || f.Page != "docs/scenarios/pool-starvation.md" ||
		err != nil || since.Before(t0) || since.After(time.Now()) {
		t.Errorf("-json: finding %+v (since: %v), want pool-starvation on unbounded since after %s", f, err, t0.Format(time.RFC3339))
	}
	evidence, _ := json.Marshal(f.Evidence)
	if want := `[{"signal":"pool_wait_p99","value":1.8,"unit":"s"},{"signal":"waiting_acquires","value":240,"unit":"count"},{"signal":"active_backends","value":0,"unit":"count"}]`; string(evidence) != want {
		t.Errorf("-json: evidence %s, want %s", evidence, want)
	}
	out = diagnoseUntil("pool-starvation firing, text", cli.ExitFail)
	for _, want := range []string{
		"pool-starvation on unbounded: firing, its condition holding since " + since.Format(time.RFC3339) + " (",
		"  Pool acquire wait p99 is 1.8 s on unbounded, every connection held.\n",
		"  evidence: pool_wait_p99=1.8 s; waiting_acquires=240 count; active_backends=0 count\n",
		"  read: docs/scenarios/pool-starvation.md\n",
		"pending: retry-storm on semaphore since ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "TailLatencyHigh") || strings.Contains(out, "no pitfall") {
		t.Errorf("text names the symptom alert or no pitfall:\n%s", out)
	}

	// Resolved: the signal gone, no pitfall again.
	signal.Store(math.Float64bits(0))
	out = diagnoseUntil("pool-starvation resolved", cli.ExitOK, "-json")
	if out != "{\n  \"findings\": []\n}\n" {
		t.Errorf("resolved: -json printed %q, want an empty list", out)
	}

	// Prometheus gone: it cannot ask.
	if err := prom.Stop(15 * time.Second); err != nil {
		t.Logf("stopping prometheus: %v", err)
	}
	code, stdout, stderr := runCLI(t, "diagnose", "-prometheus", promURL)
	if code != cli.ExitUsage || stdout != "" || !strings.Contains(stderr, "cannot ask "+promURL) {
		t.Errorf("Prometheus stopped: exit %d, stdout %q, stderr %q; want 2 and why", code, stdout, stderr)
	}
}

// startTestPrometheus runs bin scraping target every second with
// testdata/pitfall-rules.yml; it is stopped when the test ends.
func startTestPrometheus(t *testing.T, bin, target string) (*proc.Process, string) {
	t.Helper()
	rules, err := filepath.Abs(filepath.Join("testdata", "pitfall-rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	addrs, err := proc.LoopbackAddrs(1)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := fmt.Sprintf(`global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: [%q]
scrape_configs:
  - job_name: signal
    static_configs: [{targets: [%q]}]
`, rules, target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "prometheus.log")
	p, err := proc.Start("prometheus", bin, []string{
		"--config.file=" + filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path=" + filepath.Join(dir, "data"),
		"--web.listen-address=" + addrs[0],
	}, proc.BaseEnv("GOMAXPROCS"), log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Stop(15 * time.Second); err != nil {
			t.Logf("stopping prometheus: %v", err)
		}
		if t.Failed() {
			b, _ := os.ReadFile(log)
			t.Logf("--- prometheus log ---\n%s", b[max(0, len(b)-4000):])
		}
	})
	url := "http://" + addrs[0]
	if err := p.WaitReady(context.Background(), url+"/-/ready", time.Minute); err != nil {
		t.Fatal(err)
	}
	return p, url
}

// prometheusBin finds Prometheus as the repository's tests do: $PROMETHEUS
// (make test sets it), then bin/prometheus (make bin/prometheus), then
// PATH. Missing, the test fails: diagnosing against a real Prometheus is
// what this test is for.
func prometheusBin(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("PROMETHEUS"); p != "" {
		return p
	}
	if p, err := filepath.Abs(filepath.Join("..", "bin", "prometheus")); err == nil {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("prometheus"); err == nil {
		return p
	}
	t.Fatal("prometheus not found: run `make bin/prometheus` (make test does), or set PROMETHEUS to its path")
	return ""
}
