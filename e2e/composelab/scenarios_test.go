//go:build composelab

package composelab

import (
	"context"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/orderlab/orderlab/lab/knobs"
	"github.com/orderlab/orderlab/lab/scenario"
	"github.com/orderlab/orderlab/lab/scenario/catalog"
)

// The dbproxy recipe of docs/lab-scenarios.md, run as written there
// (checkDocRecipe holds the page to it).
const (
	proxyUp       = `LAB_DATABASE_URL='postgres://orderlab:orderlab@dbproxy:5432/orderlab?sslmode=disable' \` + "\n" + `  docker compose --profile dbproxy up --build -d --wait`
	proxyURL      = "postgres://orderlab:orderlab@dbproxy:5432/orderlab?sslmode=disable"
	proxyScenario = "docker compose run --rm lab scenario db-latency"
)

// labScenario is a catalog scenario the lab runs, and whether it needs
// the database proxy (compose profile dbproxy).
type labScenario struct {
	scenario.Scenario
	proxy bool
}

// inLab lists the scenarios the catalog marks "in the lab", as
// scenario.InLab says (the runner's own test of it).
func inLab(t *testing.T) []labScenario {
	t.Helper()
	all, err := catalog.All()
	if err != nil {
		t.Fatal(err)
	}
	var out []labScenario
	for _, s := range all {
		if ok, why := scenario.InLab(s); ok {
			out = append(out, labScenario{s, strings.Contains(why, "dbproxy")})
		}
	}
	return out
}

// knobsOf is a model's knobs as GET /knobs shows them, value and source.
func knobsOf(t *testing.T, name string) map[string]knobs.Knob {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := &knobs.Client{Admin: models[name].admin, Token: adminToken}
	ks, err := c.Knobs(ctx)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return ks
}

func allKnobs(t *testing.T) map[string]map[string]knobs.Knob {
	t.Helper()
	out := map[string]map[string]knobs.Knob{}
	for _, name := range modelNames {
		out[name] = knobsOf(t, name)
	}
	return out
}

// runScenario runs `docker compose run --rm lab scenario NAME args`,
// as docs/lab-scenarios.md gives it, and checks that every knob is back
// as it was found (value and source).
func runScenario(t *testing.T, l *composeLab, timeout time.Duration, name string, args ...string) {
	t.Helper()
	before := allKnobs(t)
	// Exit 1 is a missed expectation: the run went to its end, and a
	// verdict is the scenario's business, not the lab's (quick runs on a
	// loaded machine miss some). Anything else is a run that did not finish.
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	cmd := append([]string{"run", "--rm", "lab", "scenario", name}, args...)
	out, err := l.run(ctx, nil, cmd...)
	var exit *exec.ExitError
	switch {
	case err == nil:
		t.Logf("%s: every expectation met (%s)", name, time.Since(start).Round(time.Second))
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		t.Logf("%s: ran, an expectation missed (%s):\n%s", name, time.Since(start).Round(time.Second), tail(out, 12))
	default:
		t.Fatalf("docker compose %s: %v\n%s%s", strings.Join(cmd, " "), err, tail(out, 40), l.logs(append([]string{"lab"}, modelNames...)...))
	}
	knobsBack(t, l, before, name)
}

// knobsBack: every knob of every model is as it was before what ran
// (value and source).
func knobsBack(t *testing.T, l *composeLab, before map[string]map[string]knobs.Knob, what string) {
	t.Helper()
	after := allKnobs(t)
	for _, svc := range modelNames {
		for k, v := range before[svc] {
			if after[svc][k] != v {
				t.Errorf("%s: %s is %+v after %s, %+v before%s", svc, k, after[svc][k], what, v, l.logs(svc))
			}
		}
	}
}

// runLabScenarios runs every in-the-lab scenario quick. Those that need
// the database proxy run last, after the dbproxy recipe of
// docs/lab-scenarios.md; the lab is then put back on postgres:5432.
func runLabScenarios(t *testing.T, l *composeLab) {
	checkDocRecipe(t)
	all := inLab(t)
	slices.SortStableFunc(all, func(a, b labScenario) int {
		switch {
		case a.proxy == b.proxy:
			return 0
		case b.proxy:
			return -1
		}
		return 1
	})
	proxied := false
	for _, s := range all {
		if s.proxy && !proxied {
			l.must(t, 20*time.Minute, []string{"LAB_DATABASE_URL=" + proxyURL}, nil,
				"--profile", "dbproxy", "up", "--build", "-d", "--wait")
			proxied = true
		}
		t.Run(s.Name, func(t *testing.T) { runScenario(t, l, 10*time.Minute, s.Name, "-quick") })
	}
	if proxied {
		l.must(t, 10*time.Minute, nil, nil, "up", "-d", "--wait")
		l.must(t, 10*time.Minute, nil, nil, "--profile", "dbproxy", "rm", "--stop", "--force", "dbproxy")
	}
}

// checkDocRecipe: docs/lab-scenarios.md gives the dbproxy recipe as this
// test runs it.
func checkDocRecipe(t *testing.T) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "docs", "lab-scenarios.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{proxyUp, proxyScenario} {
		if !strings.Contains(string(data), want) {
			t.Errorf("docs/lab-scenarios.md no longer gives %q, which this test runs", want)
		}
	}
}

// runFullScenario runs the shortest in-the-lab scenario that needs no
// proxy at its full size.
func runFullScenario(t *testing.T, l *composeLab) {
	var best labScenario
	var shortest time.Duration
	for _, s := range inLab(t) {
		var d time.Duration
		for _, p := range s.Phases {
			if p.Load != nil {
				d += p.Load.Duration.D()
			}
		}
		if !s.proxy && d > 0 && (shortest == 0 || d < shortest) {
			best, shortest = s, d
		}
	}
	if shortest == 0 {
		t.Fatal("no scenario to run at full size")
	}
	t.Logf("%s: %s of load a target", best.Name, shortest)
	runScenario(t, l, 30*time.Minute, best.Name)
}

func checkExemplarsInJaeger(t *testing.T, l *composeLab) {
	var ids []string
	eventually(t, 2*time.Minute, func() bool {
		var r struct {
			Data []struct {
				Exemplars []struct {
					Labels map[string]string `json:"labels"`
				} `json:"exemplars"`
			} `json:"data"`
		}
		now := time.Now()
		getJSON(t, prometheusURL+"/api/v1/query_exemplars?query="+urlQuery(`{__name__=~"orderlab_.+_bucket"}`)+
			"&start="+now.Add(-15*time.Minute).Format(time.RFC3339)+"&end="+now.Format(time.RFC3339), &r)
		ids = nil
		for _, s := range r.Data {
			for _, e := range s.Exemplars {
				if id := e.Labels["trace_id"]; id != "" {
					ids = append(ids, id)
				}
			}
		}
		return len(ids) > 0
	}, func() string { return "no exemplar with a trace_id in Prometheus" + l.logs("prometheus") })
	found := 0
	eventually(t, time.Minute, func() bool {
		for _, id := range ids[max(0, len(ids)-10):] {
			if code, _ := get(t, jaegerURL+"/api/traces/"+id, ""); code == 200 {
				found++
			}
		}
		return found > 0
	}, func() string { return "no exemplar trace id opens in Jaeger" + l.logs("jaeger") })
	t.Logf("%d exemplar trace ids; of the last 10, %d open in Jaeger", len(ids), found)
}

func checkJaegerServices(t *testing.T, l *composeLab) {
	var r struct {
		Data []string `json:"data"`
	}
	eventually(t, time.Minute, func() bool {
		getJSON(t, jaegerURL+"/api/services", &r)
		for _, name := range modelNames {
			if !slices.Contains(r.Data, "orderlab-"+name) {
				return false
			}
		}
		return true
	}, func() string { return "jaeger services " + strings.Join(r.Data, ", ") + l.logs("jaeger") })
}

// containerIDs are the running containers by service.
func containerIDs(t *testing.T, l *composeLab) map[string]string {
	t.Helper()
	ids := map[string]string{}
	for _, c := range l.ps(t, false) {
		ids[c.Service] = c.ID
	}
	return ids
}

func checkRebuildKeeps(t *testing.T, l *composeLab) {
	before := containerIDs(t, l)
	for i := range 2 {
		l.must(t, 20*time.Minute, nil, nil, "up", "--build", "-d", "--wait")
		after := containerIDs(t, l)
		for svc, id := range before {
			if after[svc] != id {
				t.Errorf("up --build #%d with nothing changed recreated %s", i+1, svc)
			}
		}
	}
}

// orders counts the lab's orders, read from the host (POSTGRES_PORT 5433).
func orders(t *testing.T) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, labDBURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM orders").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func checkRestartKeepsOrders(t *testing.T, l *composeLab) {
	before := orders(t)
	if before == 0 {
		t.Fatal("no orders in the lab after the scenarios")
	}
	l.must(t, 5*time.Minute, nil, nil, "down")
	l.must(t, 20*time.Minute, nil, nil, "up", "-d", "--wait")
	if after := orders(t); after < before {
		t.Errorf("%d orders after down and up, %d before", after, before)
	}
}

func checkDownRemoves(t *testing.T, l *composeLab) {
	l.must(t, 5*time.Minute, nil, nil, "down", "--volumes")
	for _, kind := range []string{"container", "network", "volume"} {
		args := []string{kind, "ls", "-q", "--filter", "label=com.docker.compose.project=orderlab"}
		if kind == "container" {
			args = append(args, "-a")
		}
		out, err := dockerOut(args...)
		if err != nil || strings.TrimSpace(out) != "" {
			t.Errorf("after down -v, docker %s: %q %v", strings.Join(args, " "), out, err)
		}
	}
}

func urlQuery(s string) string { return url.QueryEscape(s) }

// checkLoadtestForwards: `docker compose run --rm loadtest scenario -list`,
// as the docs gave it before the lab had a command of its own, still lists
// the catalog: the loadtest service's loadtest runs the lab beside it in
// the image, and says so once.
func checkLoadtestForwards(t *testing.T, l *composeLab) {
	want := l.must(t, 2*time.Minute, nil, nil, "run", "--rm", "lab", "scenario", "-list")
	got := l.must(t, 2*time.Minute, nil, nil, "run", "--rm", "loadtest", "scenario", "-list")
	if n := strings.Count(got, "this mode is `lab scenario` now"); n != 1 {
		t.Errorf("loadtest scenario -list said the move %d times, want once:\n%s", n, tail(got, 10))
	}
	for _, line := range strings.Split(strings.TrimSpace(want), "\n") {
		if !strings.Contains(got, line) {
			t.Errorf("loadtest scenario -list lacks lab's line %q:\n%s", line, tail(got, 10))
		}
	}
	if !strings.Contains(want, "pool-starvation") {
		t.Errorf("lab scenario -list does not list pool-starvation:\n%s", tail(want, 10))
	}
}
