//go:build composelab

package composelab

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The pgbouncer recipe of docs/lab.md (Too many clients, fix B), run as
// written there (the variables as its command line gives them).
const (
	pgbouncerURL = "postgres://orderlab:orderlab@pgbouncer:5432/orderlab?sslmode=disable&default_query_exec_mode=exec"
	pgbouncerUp  = "POSTGRES_MAX_CONNECTIONS=50 PGBOUNCER_POOL=40 \\\n" +
		"LAB_DATABASE_URL='" + pgbouncerURL + "' \\\n" +
		"  docker compose --profile pgbouncer up -d --build"
)

// pgbouncerJob is prometheus/prometheus.yml's job for the pgbouncer
// profile's exporter: the one target that is down while the profile is off
// (its name does not resolve), so checkPrometheus lets it be.
const pgbouncerJob = "pgbouncer"

// checkPgBouncerRecipe: after the recipe, a load run from
// `docker compose run --rm loadtest` is served through PgBouncer, and the
// services still reach Postgres through it afterwards (the run recreated
// nothing); Prometheus scrapes PgBouncer's exporter and the board's
// PgBouncer row has data. The lab is then put back as it was.
func checkPgBouncerRecipe(t *testing.T, l *composeLab) {
	data, err := os.ReadFile(filepath.Join(root, "docs", "lab.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), pgbouncerUp) {
		t.Fatalf("docs/lab.md no longer gives %q, which this test runs", pgbouncerUp)
	}
	env := []string{"POSTGRES_MAX_CONNECTIONS=50", "PGBOUNCER_POOL=40", "LAB_DATABASE_URL=" + pgbouncerURL}
	l.must(t, 20*time.Minute, env, nil, "--profile", "pgbouncer", "up", "-d", "--build", "--wait")
	throughPgBouncer := func(when string) {
		for _, name := range modelNames {
			if v := knobsOf(t, name)["DATABASE_URL"].Value; !strings.Contains(v, "pgbouncer") {
				t.Errorf("%s %s: DATABASE_URL %q, want PgBouncer%s", name, when, v, l.logs(name, "pgbouncer"))
			}
		}
	}
	throughPgBouncer("after the recipe")
	out := l.must(t, 5*time.Minute, nil, nil, "run", "--rm", "loadtest", "closed", "-allow-remote", "-c", "20", "-d", "5s",
		"-method", "POST", "http://unbounded:8080/orders?db_delay=5ms")
	t.Log(tail(out, 8))
	throughPgBouncer("after docker compose run")
	checkPgBouncerRow(t, l)
	l.must(t, 10*time.Minute, nil, nil, "up", "-d", "--wait")
	l.must(t, 10*time.Minute, nil, nil, "--profile", "pgbouncer", "rm", "--stop", "--force", "pgbouncer-exporter", "pgbouncer")
}

// checkPgBouncerRow: the exporter's target is up and reads PgBouncer
// (pgbouncer_up 1), and every query of the board's PgBouncer row returns
// series for the lab's database, with one exception said aloud: the wait
// per server assignment needs server_assignment_count, which PgBouncer
// has from 1.23 (the offline stand-in is Debian's 1.18).
func checkPgBouncerRow(t *testing.T, l *composeLab) {
	eventually(t, time.Minute, func() bool {
		return len(query(t, `up{job="`+pgbouncerJob+`"} == 1`)) == 1 && len(query(t, `pgbouncer_up{job="`+pgbouncerJob+`"} == 1`)) == 1
	}, func() string {
		return "pgbouncer-exporter not scraped, or pgbouncer_up not 1" + l.logs("pgbouncer-exporter", "pgbouncer", "prometheus")
	})
	versions := query(t, `pgbouncer_version_info{job="`+pgbouncerJob+`"}`)
	if len(versions) != 1 {
		t.Fatalf("pgbouncer_version_info: %v, want one series", versions)
	}
	assignments := atLeast(t, versions[0]["version"], 1, 23)
	t.Logf("PgBouncer under the exporter: %s (server_assignment_count: %v)", versions[0]["version"], assignments)
	exprs := pgbouncerExprs(t)
	if len(exprs) == 0 {
		t.Fatal("the board has no query of pgbouncer_ series")
	}
	for _, e := range exprs {
		expr := strings.ReplaceAll(e, "$__rate_interval", "1m")
		if strings.Contains(expr, "server_assignments_total") && !assignments {
			if got := query(t, expr); len(got) != 0 {
				t.Errorf("%s: %v from a PgBouncer without server_assignment_count", expr, got)
			}
			t.Logf("not checked, the PgBouncer has no server_assignment_count: %s", expr)
			continue
		}
		eventually(t, 30*time.Second, func() bool {
			for _, s := range query(t, expr) {
				if s["database"] == "orderlab" {
					return true
				}
			}
			return false
		}, func() string { return "the board's PgBouncer row: no series for orderlab from " + expr })
	}
}

// pgbouncerExprs are the board's queries of pgbouncer_exporter's series.
func pgbouncerExprs(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "grafana", "dashboards", "orderlab-pool-starvation.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && k == "expr" && strings.Contains(s, "pgbouncer_") {
					out = append(out, s)
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(doc)
	return out
}

// atLeast reports whether a SHOW VERSION string ("PgBouncer 1.18.0") is
// major.minor or later.
func atLeast(t *testing.T, version string, major, minor int) bool {
	t.Helper()
	m := regexp.MustCompile(`(\d+)\.(\d+)`).FindStringSubmatch(version)
	if m == nil {
		t.Fatalf("PgBouncer version %q: no major.minor", version)
	}
	maj, _ := strconv.Atoi(m[1])
	mnr, _ := strconv.Atoi(m[2])
	return maj > major || maj == major && mnr >= minor
}
