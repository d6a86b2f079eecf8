package e2e

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
)

// The e2e lab starts the three services with compose.yaml's environment,
// read with compose-go, as `docker compose up` would give it with labVars
// in .env: the lab and the e2e are one lab. Its settings are compose
// variables, so that each has a `docker compose up` that reproduces it.

// labVars are the compose variables of the overload run: a small pool (so
// that overload is cheap to produce on a 2-core machine) and a short
// deadline; the semaphore waits 50 ms for a permit; a short pipeline queue
// in small batches. Knobs compose leaves empty keep the services' defaults,
// as in the lab: LIMIT and WORKERS follow DB_MAX_CONNS.
var labVars = map[string]string{
	"DB_MAX_CONNS":     "4",
	"REQUEST_TIMEOUT":  "10s",
	"SHUTDOWN_TIMEOUT": "5s",
	"LOG_LEVEL":        "warn",
	// Exercise the audit path too: per-order goroutines in unbounded and
	// semaphore, the bounded audit stage in pipeline.
	"AUDIT_DELAY": "20ms",
	// A tenth of the requests is traced: enough exemplars and spans to find,
	// few enough not to load the 2 cores.
	"TRACE_SAMPLE_RATIO": "0.1",
	"LIMIT_WAIT":         "50ms",
	"QUEUE_CAPACITY":     "64",
	"BATCH_MAX":          "16",
	"ENQUEUE_WAIT":       "10ms",
}

// labServiceVars are variables for one service only, as
// `HTTP_SERVER=nbio docker compose up -d pipeline` gives them: the pipeline
// is served by nbio, so that the lab runs both HTTP servers and the
// handler-pool panel has data.
var labServiceVars = map[string]map[string]string{
	"pipeline": {"HTTP_SERVER": "nbio"},
}

// labLoad is the overload run's load (docs/lab.md, "Compare the fixes").
var labLoad = overload{clients: 100, duration: 15 * time.Second, dbDelay: "50ms"}

// overload is the load of the starvation check: the same closed-loop
// overload against every service at once. Each order holds its connection
// for dbDelay, so a pool of labVars' DB_MAX_CONNS serves at most
// DB_MAX_CONNS/dbDelay orders per second, far below what the clients ask.
type overload struct {
	clients  int
	duration time.Duration
	dbDelay  string
}

// labAddrKeys are the environment variables that say where a service
// listens and what it reaches: the e2e points them at local processes
// (lab/local sets the first three).
var labAddrKeys = []string{"DATABASE_URL", "HTTP_ADDR", "ADMIN_ADDR", "OTEL_EXPORTER_OTLP_ENDPOINT"}

// loadComposeVars loads compose.yaml as loadCompose does, with vars as
// the environment compose interpolates.
func loadComposeVars(t *testing.T, vars map[string]string) *types.Project {
	t.Helper()
	var env []string
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		env = append(env, k+"="+vars[k])
	}
	opts, err := cli.NewProjectOptions(
		[]string{filepath.Join(root, "compose.yaml")},
		cli.WithWorkingDirectory(root),
		cli.WithEnv(env),
		cli.WithProfiles([]string{"loadtest", "pgbouncer", "dbproxy"}),
		cli.WithInterpolation(true),
		cli.WithNormalization(true),
	)
	if err != nil {
		t.Fatal(err)
	}
	project, err := opts.LoadProject(context.Background())
	if err != nil {
		t.Fatalf("compose.yaml does not load: %v", err)
	}
	return project
}

// labServiceEnv is name's environment in compose with labVars and its
// labServiceVars, the addresses (labAddrKeys) left out but for the OTLP
// endpoint, otlpURL. An empty value is passed on empty: the service then
// uses its default, as in compose.
func labServiceEnv(t *testing.T, name, otlpURL string) map[string]string {
	t.Helper()
	vars := maps.Clone(labVars)
	maps.Copy(vars, labServiceVars[name])
	s, ok := loadComposeVars(t, vars).Services[name]
	if !ok {
		t.Fatalf("compose.yaml: no service %s", name)
	}
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": otlpURL}
	for k, v := range s.Environment {
		if v != nil && !slices.Contains(labAddrKeys, k) {
			env[k] = *v
		}
	}
	return env
}

// TestLabSettingsAreCompose holds the e2e lab to compose.yaml: each of its
// settings is a variable compose.yaml passes to the services, and each
// service's environment is compose's with those variables, addresses
// aside. A setting the e2e gave a service behind compose's back (the
// e2e once ran the pipeline with WORKERS=2, compose with WORKERS unset)
// would be a second lab, whose tests say nothing of the first.
func TestLabSettingsAreCompose(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	compose := string(data)
	all := maps.Clone(labVars)
	for _, vars := range labServiceVars {
		maps.Copy(all, vars)
	}
	for k := range all {
		if !regexp.MustCompile(`\$\{` + k + `[:}]`).MatchString(compose) {
			t.Errorf("the e2e lab sets %s, which is no variable of compose.yaml", k)
		}
	}
	plain := loadCompose(t) // compose with no variables: the lab's defaults
	for _, name := range modelServices {
		env := labServiceEnv(t, name, "http://127.0.0.1:4318")
		for k, v := range plain.Services[name].Environment {
			if slices.Contains(labAddrKeys, k) && k != "OTEL_EXPORTER_OTLP_ENDPOINT" {
				continue
			}
			if _, ok := env[k]; !ok {
				t.Errorf("%s: compose sets %s, the e2e lab does not", name, k)
				continue
			}
			if v != nil && env[k] != *v && !slices.Contains(labAddrKeys, k) && !setByVar(compose, k, all) {
				t.Errorf("%s: %s=%q in the e2e lab, %q in compose", name, k, env[k], *v)
			}
		}
		for k := range env {
			if _, ok := plain.Services[name].Environment[k]; !ok {
				t.Errorf("%s: the e2e lab sets %s, which compose does not", name, k)
			}
		}
		if v, ok := env["WORKERS"]; name == "pipeline" && (!ok || v != "") {
			t.Errorf("pipeline: WORKERS=%q in the e2e lab; compose leaves it empty (it follows DB_MAX_CONNS)", v)
		}
	}
}

// setByVar says whether compose.yaml gives the environment variable key
// the value of one of vars (`KEY: ${VAR:-default}`).
func setByVar(compose, key string, vars map[string]string) bool {
	for _, m := range regexp.MustCompile(`(?m)^\s+`+key+`: .*\$\{(\w+)`).FindAllStringSubmatch(compose, -1) {
		if _, ok := vars[m[1]]; ok {
			return true
		}
	}
	return false
}
