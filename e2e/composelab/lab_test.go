//go:build composelab

package composelab

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
)

// The published ports of compose.yaml.
var (
	models = map[string]struct{ api, admin string }{
		"unbounded": {"http://127.0.0.1:8081", "http://127.0.0.1:9091"},
		"semaphore": {"http://127.0.0.1:8082", "http://127.0.0.1:9092"},
		"pipeline":  {"http://127.0.0.1:8083", "http://127.0.0.1:9093"},
	}
)

const (
	prometheusURL = "http://127.0.0.1:9090"
	jaegerURL     = "http://127.0.0.1:16686"
	frontURL      = "http://127.0.0.1:8080"
	grafanaURL    = "http://127.0.0.1:3000"
	// The lab's defaults (compose.yaml), as a user without .env has them.
	adminToken = "orderlab-admin"
	labDBURL   = "postgres://orderlab:orderlab@127.0.0.1:5433/orderlab?sslmode=disable"
)

// TestComposeLab brings the lab up as the README does and checks it from
// the host, runs every scenario the catalog marks "in the lab", then
// takes it through a rebuild, a restart and its removal. The steps share
// one lab, in order; a step that fails stops the test, with the failing
// service's last log lines.
func TestComposeLab(t *testing.T) {
	l := newComposeLab(t)
	l.must(t, 5*time.Minute, nil, nil, "--profile", "dbproxy", "--profile", "pgbouncer", "down", "--volumes", "--remove-orphans")
	// Removed also after a failure (whose message has the logs), so that
	// what runs next has the machine's memory back.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if out, err := l.run(ctx, nil, "--profile", "dbproxy", "--profile", "pgbouncer", "down", "--volumes", "--remove-orphans"); err != nil {
			t.Logf("docker compose down: %v\n%s", err, out)
		}
	})

	if !t.Run("the engine grants every limit compose.yaml asks for", func(t *testing.T) { checkLimitsGranted(t, l) }) {
		t.FailNow()
	}
	l.must(t, 45*time.Minute, nil, nil, "up", "--build", "--detach", "--wait")
	steps := []struct {
		name string
		fn   func(*testing.T, *composeLab)
	}{
		{"every container healthy", checkHealthy},
		{"services answer on the published ports", checkServices},
		{"prometheus: targets up, rules loaded, background load", checkPrometheus},
		{"front page and catalog", checkFront},
		{"knob API: token and values", checkKnobAPI},
		{"loadtest's former modes run through lab", checkLoadtestForwards},
		{"every in-the-lab scenario, quick, in compose", runLabScenarios},
		{"the pgbouncer recipe", checkPgBouncerRecipe},
		{"exemplar trace ids open in jaeger", checkExemplarsInJaeger},
		{"jaeger has traces of every service", checkJaegerServices},
		{"one scenario at full size", runFullScenario},
		{"up --build twice recreates nothing", checkRebuildKeeps},
		{"down then up keeps the orders", checkRestartKeepsOrders},
		{"down -v leaves nothing", checkDownRemoves},
	}
	for _, s := range steps {
		if !t.Run(s.name, func(t *testing.T) { s.fn(t, l) }) {
			t.FailNow()
		}
	}
}

func checkHealthy(t *testing.T, l *composeLab) {
	cs := l.ps(t, true)
	var got []string
	for _, c := range cs {
		got = append(got, c.Service)
		if c.State != "running" || c.Health != "healthy" {
			t.Errorf("%s: %s, health %q%s", c.Service, c.State, c.Health, l.logs(c.Service))
		}
	}
	slices.Sort(got)
	// The services `docker compose up` starts: those of no profile.
	want := strings.Fields(l.must(t, time.Minute, nil, nil, "config", "--services"))
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("containers %v, want %v", got, want)
	}
}

func checkServices(t *testing.T, l *composeLab) {
	for _, name := range modelNames {
		p := models[name]
		if code, body := get(t, p.api+"/readyz", ""); code != http.StatusOK {
			t.Errorf("%s: GET /readyz: %d %s%s", name, code, body, l.logs(name))
		}
		if code, body := get(t, p.admin+"/metrics", ""); code != http.StatusOK || !strings.Contains(body, "orderlab_service_info") {
			t.Errorf("%s: GET /metrics: %d, orderlab_service_info missing%s", name, code, l.logs(name))
		}
	}
	if code, body := get(t, grafanaURL+"/api/health", ""); code != http.StatusOK {
		t.Errorf("grafana: GET /api/health: %d %s%s", code, body, l.logs("grafana"))
	}
}

func checkPrometheus(t *testing.T, l *composeLab) {
	// Every target up (the background load is scraped too), but the
	// pgbouncer profile's exporter: the profile is off here.
	var down []string
	eventually(t, 90*time.Second, func() bool {
		var r struct {
			Data struct {
				ActiveTargets []struct {
					ScrapePool string `json:"scrapePool"`
					Health     string `json:"health"`
					LastError  string `json:"lastError"`
				} `json:"activeTargets"`
			} `json:"data"`
		}
		getJSON(t, prometheusURL+"/api/v1/targets", &r)
		down = nil
		for _, tg := range r.Data.ActiveTargets {
			if tg.Health != "up" && tg.ScrapePool != pgbouncerJob {
				down = append(down, tg.ScrapePool+": "+tg.Health+" "+tg.LastError)
			}
		}
		return len(r.Data.ActiveTargets) > 0 && len(down) == 0
	}, func() string { return fmt.Sprintf("targets not up: %v%s", down, l.logs("prometheus")) })

	// Every rule group of prometheus/rules loaded.
	want := ruleGroups(t)
	var r struct {
		Data struct {
			Groups []struct {
				Name string `json:"name"`
			} `json:"groups"`
		} `json:"data"`
	}
	getJSON(t, prometheusURL+"/api/v1/rules", &r)
	var got []string
	for _, g := range r.Data.Groups {
		got = append(got, g.Name)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("rule groups loaded %v, prometheus/rules has %v%s", got, want, l.logs("prometheus"))
	}

	// The background load, counted under each service's job.
	eventually(t, 2*time.Minute, func() bool {
		return len(query(t, `sum by (job) (rate(orderlab_background_requests_total{outcome="ok"}[1m])) > 0`)) == len(modelNames)
	}, func() string { return "no background load seen for every service" + l.logs("background", "prometheus") })
}

// ruleGroups are the names of prometheus/rules' groups, sorted.
func ruleGroups(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "prometheus", "rules", "*.yml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("prometheus/rules: %v", err)
	}
	var names []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Groups []struct {
				Name string `yaml:"name"`
			} `yaml:"groups"`
		}
		if err := yaml.Unmarshal(data, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, g := range doc.Groups {
			names = append(names, g.Name)
		}
	}
	slices.Sort(names)
	return names
}

func checkFront(t *testing.T, l *composeLab) {
	if code, body := get(t, frontURL+"/", ""); code != http.StatusOK || !strings.Contains(strings.ToLower(body), "<html") {
		t.Errorf("front: GET /: %d%s", code, l.logs("front"))
	}
	var catalog []map[string]any
	getJSON(t, frontURL+"/api/catalog", &catalog)
	if len(catalog) < len(inLab(t)) {
		t.Errorf("front: the catalog lists %d scenarios, the lab runs %d%s", len(catalog), len(inLab(t)), l.logs("front"))
	}
}

func checkKnobAPI(t *testing.T, l *composeLab) {
	admin := models["semaphore"].admin
	cases := []struct {
		token, body string
		want        int
	}{
		{"", `{"LIMIT_WAIT":"60ms"}`, http.StatusUnauthorized},
		{"wrong", `{"LIMIT_WAIT":"60ms"}`, http.StatusUnauthorized},
		{adminToken, `{"LIMIT_WAIT":"soon"}`, http.StatusBadRequest},
		{adminToken, `{"LIMIT_WAIT":"60ms"}`, http.StatusOK},
		{adminToken, `{"LIMIT_WAIT":""}`, http.StatusOK}, // back as it started
	}
	for _, c := range cases {
		code, body := do(t, http.MethodPatch, admin+"/knobs", c.token, c.body)
		if code != c.want {
			t.Errorf("PATCH /knobs %s with token %q: %d %s, want %d%s", c.body, c.token, code, body, c.want, l.logs("semaphore"))
		}
	}
	if code, body := get(t, admin+"/knobs", ""); code != http.StatusOK || !strings.Contains(body, `"LIMIT_WAIT"`) {
		t.Errorf("GET /knobs: %d %s", code, body)
	}
	if v := knobsOf(t, "semaphore")["LIMIT_WAIT"]; v.Value != "100ms" {
		t.Errorf("LIMIT_WAIT %+v after the PATCH of \"\", want compose's 100ms", v)
	}
}

// get, do and getJSON are the test's HTTP calls, with a bearer token when
// one is given.
func get(t *testing.T, url, token string) (int, string) { return do(t, http.MethodGet, url, token, "") }

func do(t *testing.T, method, url, token, body string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	return resp.StatusCode, string(b)
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	code, body := get(t, url, "")
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, code, tail(body, 5))
	}
	if err := json.Unmarshal([]byte(body), v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

// query runs an instant PromQL query and returns its samples' labels.
func query(t *testing.T, expr string) []map[string]string {
	t.Helper()
	var r struct {
		Data struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
			} `json:"result"`
		} `json:"data"`
	}
	getJSON(t, prometheusURL+"/api/v1/query?query="+urlQuery(expr), &r)
	var out []map[string]string
	for _, s := range r.Data.Result {
		out = append(out, s.Metric)
	}
	return out
}

// eventually polls ok every 2 s until it holds or timeout passes, then
// fails with why().
func eventually(t *testing.T, timeout time.Duration, ok func() bool, why func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal(why())
		}
		time.Sleep(2 * time.Second)
	}
}
