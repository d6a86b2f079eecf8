package main

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orderlab/orderlab/internal/cli"
	"github.com/orderlab/orderlab/internal/standin"
	"github.com/orderlab/orderlab/loadtest/annotate"
	"github.com/orderlab/orderlab/loadtest/attack"
	"github.com/orderlab/orderlab/loadtest/measure"
)

// TestParseLoadFillsTheDefaults: what a command line leaves out is
// attack.Defaults of the load shape (and measure's), for every mode alike.
func TestParseLoadFillsTheDefaults(t *testing.T) {
	const u = "http://127.0.0.1:1/"
	for _, c := range []struct {
		args []string
		want attack.Config
	}{
		{[]string{"burst", u}, attack.Config{Mode: attack.ModeBurst, Concurrency: 1000, Requests: 1000, Retries: 5, Warmup: true}},
		{[]string{"closed", u}, attack.Config{Mode: attack.ModeClosed, Concurrency: 50, Duration: 10 * time.Second, Retries: 5}},
		{[]string{"closed", "-n", "7", u}, attack.Config{Mode: attack.ModeClosed, Concurrency: 50, Requests: 7, Retries: 5}},
		{[]string{"open", "-rate", "5", u}, attack.Config{Mode: attack.ModeOpen, Concurrency: 1000, Duration: 30 * time.Second, Retries: 5}},
		{[]string{"compare", "-mode", "open", "-rate", "5"}, attack.Config{Mode: attack.ModeOpen, Concurrency: 1000, Duration: 30 * time.Second, Retries: 5}},
		{[]string{"compare"}, attack.Config{Mode: attack.ModeClosed, Concurrency: 50, Duration: 10 * time.Second, Retries: 5}},
		{[]string{"compare", "-mode", "burst", "-n", "20"}, attack.Config{Mode: attack.ModeBurst, Concurrency: 20, Requests: 20, Retries: 5, Warmup: true}},
	} {
		p, err := parseLoad(c.args[0], c.args[1:], func(string) string { return "" }, io.Discard)
		if err != nil {
			t.Errorf("%q: %v", c.args, err)
			continue
		}
		got, def := p.attack, attack.Defaults(c.want.Mode)
		if got.Mode != c.want.Mode || got.Concurrency != c.want.Concurrency || got.Requests != c.want.Requests ||
			got.Duration != c.want.Duration || got.Retries != c.want.Retries || got.Warmup != c.want.Warmup {
			t.Errorf("%q: got %+v, want %+v", c.args, got, c.want)
		}
		if got.Retry != def.Retry || got.RetryMaxWait != def.RetryMaxWait {
			t.Errorf("%q: retry %q, max wait %s; want attack.Defaults", c.args, got.Retry, got.RetryMaxWait)
		}
		if got.Timeout != def.Timeout || got.Client != def.Client || got.Target.Method != def.Target.Method || got.Target.Body != nil {
			t.Errorf("%q: timeout %s, client %q, method %q; want attack.Defaults", c.args, got.Timeout, got.Client, got.Target.Method)
		}
		if p.scrape != measure.DefaultScrapeInterval || (c.args[0] == "compare" && p.pause != measure.DefaultPause) || p.grafana != nil {
			t.Errorf("%q: scrape %s, pause %s, grafana %v", c.args, p.scrape, p.pause, p.grafana)
		}
	}
}

// TestParseLoadRetryPolicy: -retry, -retries and -retry-max-wait reach the
// attack configuration; a bad policy, or one for a burst, is a usage error.
func TestParseLoadRetryPolicy(t *testing.T) {
	const u = "http://127.0.0.1:1/"
	p, err := parseLoad("closed", []string{"-retry", "honor", "-retries", "3", "-retry-max-wait", "2s", u}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.attack; got.Retry != attack.RetryHonor || got.Retries != 3 || got.RetryMaxWait != 2*time.Second {
		t.Errorf("retry %q, retries %d, max wait %s; want honor, 3, 2s", got.Retry, got.Retries, got.RetryMaxWait)
	}
	for _, args := range [][]string{
		{"closed", "-retry", "sometimes", u},
		{"open", "-rate", "5", "-retry-max-wait", "-1s", u},
		{"closed", "-retries", "-1", u},
		{"compare", "-mode", "burst", "-n", "5", "-retry", "immediate"},
	} {
		_, err := parseLoad(args[0], args[1:], func(string) string { return "" }, io.Discard)
		var ue cli.UsageError
		var fe cli.FlagParseError
		if !errors.As(err, &ue) && !errors.As(err, &fe) {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
}

// TestParseLoadReadsTheEnvironmentItIsGiven: GRAFANA_URL comes from the
// getenv run is given, at parse time; a malformed one is a usage error.
func TestParseLoadReadsTheEnvironmentItIsGiven(t *testing.T) {
	env := map[string]string{"GRAFANA_URL": "http://admin:pw@127.0.0.1:3000"}
	p, err := parseLoad("closed", []string{"-n", "1", "http://127.0.0.1:1/"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil || p.grafana == nil {
		t.Fatalf("plan %+v, err %v: want a Grafana client", p, err)
	}
	code, _, stderr := runCLIEnv(t, map[string]string{"GRAFANA_URL": "grafana:3000"}, "closed", "-n", "1", "http://127.0.0.1:1/")
	if code != cli.ExitUsage || !strings.Contains(stderr, "GRAFANA_URL") {
		t.Errorf("exit %d, stderr %q; want 2 naming GRAFANA_URL", code, stderr)
	}
}

// TestRunMarksEachRunOnGrafana runs closed mode with GRAFANA_URL set in the
// environment run is given: the fake Grafana sees the start of the run,
// tagged for the board, and its end.
func TestRunMarksEachRunOnGrafana(t *testing.T) {
	s := standin.New(t, false)
	var mu sync.Mutex
	var calls []string
	var tags []any
	grafana := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, r.Method+" "+r.URL.Path)
		if r.Method == http.MethodPost {
			tags, _ = body["tags"].([]any)
		}
		_, _ = w.Write([]byte(`{"id":7}`))
	}))
	defer grafana.Close()
	code, _, stderr := runCLIEnv(t, map[string]string{"GRAFANA_URL": grafana.URL}, "closed", "-c", "2", "-n", "20", "-method", "POST", "-name", "svc", s.API.URL+"/orders")
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(calls, ",") != "POST /api/annotations,PATCH /api/annotations/7" {
		t.Errorf("Grafana saw %v", calls)
	}
	if !slices.Equal(tags, []any{annotate.Tag, "closed", "svc"}) {
		t.Errorf("tags %v, want %q, the mode and the target", tags, annotate.Tag)
	}
}

// TestRefusedGrafanaLoginIsSaidOnce: with a GRAFANA_URL whose password
// Grafana refuses, a compare of two targets still runs both, and stderr says
// once, not per run, that the runs are not marked and why.
func TestRefusedGrafanaLoginIsSaidOnce(t *testing.T) {
	a, b := standin.New(t, false), standin.New(t, false)
	grafana := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"message":"Invalid username or password"}`, http.StatusUnauthorized)
	}))
	defer grafana.Close()
	env := map[string]string{"GRAFANA_URL": strings.Replace(grafana.URL, "http://", "http://admin:old@", 1)}
	code, _, stderr := runCLIEnv(t, env, "compare", "-mode", "closed", "-c", "1", "-n", "5", "-pause", "0s",
		"-path", "/work/db?delay=1ms", "a="+a.API.URL, "b="+b.API.URL)
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if n := strings.Count(stderr, "refused the login"); n != 1 {
		t.Errorf("stderr says %d times that Grafana refused the login, want once:\n%s", n, stderr)
	}
	if !strings.Contains(stderr, "GRAFANA_ADMIN_PASSWORD") {
		t.Errorf("stderr does not say what to fix:\n%s", stderr)
	}
}
