package doccheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// serviceKnobs are the services' settings: the rows of the knobs table
// (docs/reference/knobs.md), which services/internal/knob's tests hold row
// for row to the declarations (internal/ may not import services/internal).
func serviceKnobs(t *testing.T) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "docs/reference/knobs.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([A-Z][A-Z0-9_]+)`").FindAllStringSubmatch(string(data), -1) {
		out[m[1]] = true
	}
	if len(out) < 20 {
		t.Fatalf("docs/reference/knobs.md: found only %d knobs", len(out))
	}
	return out
}

// otherVariables are environment variables that are not the services'
// knobs, each with where it is read.
var otherVariables = map[string]string{
	"TEST_DATABASE_URL":                  "the tests (internal/pgtest)",
	"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "telemetry.ReadTracing (wins over OTEL_EXPORTER_OTLP_ENDPOINT)",
	"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "telemetry.ReadTracing (wins over OTEL_EXPORTER_OTLP_PROTOCOL)",
	"PG_BINDIR":                          "internal/pgcluster",
	"CHROMIUM":                           "the browser tests of make lab-check (lab/scenario, e2e)",
	"PROMETHEUS":                         "make lab-check and make e2e (e2e)",
	"JAEGER":                             "make e2e-jaeger",
	"GRAFANA_URL":                        "loadtest (annotations)",
	"GOMAXPROCS":                         "the Go runtime",
	"GOGC":                               "the Go runtime",
	"GOMEMLIMIT":                         "the Go runtime",
	"GOTOOLCHAIN":                        "the go command",
	"CI":                                 ".ci/run",
	"ORDERLAB_LAB":                       "lab scenario -lab and lab front (compose's front, lab and loadtest services set it)",
	"OTEL_TRACES_SAMPLER":                "the OpenTelemetry SDK",
	"OTEL_TRACES_SAMPLER_ARG":            "the OpenTelemetry SDK",
	"GF_USERS_HOME_PAGE":                 "Grafana (compose.yaml)",
	"GF_SECURITY_ADMIN_PASSWORD":         "Grafana (compose.yaml)",
	"SHARDS":                             "the load generators' Job (deploy/kubernetes/lab/loadtest)",
	"TARGET":                             "the load generators' Job (deploy/kubernetes/lab/loadtest)",
	"RATE":                               "the load generators' Job (deploy/kubernetes/lab/loadtest)",
	"DURATION":                           "the load generators' Job (deploy/kubernetes/lab/loadtest)",
	"CONNECTIONS":                        "the load generators' Job (deploy/kubernetes/lab/loadtest)",
	"SCENARIO_SCREENSHOT":                "the report test (lab/scenario)",
}

// declared is every name a page may show as an environment variable: the
// services' knobs, the variables compose.yaml reads, the Makefile's
// variables, and otherVariables.
func declared(t *testing.T) map[string]bool {
	out := serviceKnobs(t)
	compose, err := os.ReadFile(filepath.Join(root, "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`\$\{([A-Z][A-Z0-9_]+)`).FindAllStringSubmatch(string(compose), -1) {
		out[m[1]] = true
	}
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`(?m)^(?:export )?([A-Z][A-Z0-9_]+) *[?:]?=`).FindAllStringSubmatch(string(mk), -1) {
		out[m[1]] = true
	}
	for _, m := range regexp.MustCompile(`\$\(([A-Z][A-Z0-9_]+)\)`).FindAllStringSubmatch(string(mk), -1) {
		out[m[1]] = true
	}
	for k := range otherVariables {
		out[k] = true
	}
	return out
}

// TestNamedKnobsAreDeclared: every environment variable a page shows in a
// code span (`NAME` or `NAME=value`) is declared.
func TestNamedKnobsAreDeclared(t *testing.T) {
	known := declared(t)
	env := regexp.MustCompile(`^([A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9]|[A-Z]{4,})(?:=.*)?$`)
	checked := 0
	for _, page := range markdownFiles(t) {
		data, _ := os.ReadFile(filepath.Join(root, page))
		text := fence.ReplaceAllString(string(data), "")
		for _, m := range regexp.MustCompile("`([^`\n]+)`").FindAllStringSubmatch(text, -1) {
			for _, word := range strings.Fields(m[1]) {
				v := env.FindStringSubmatch(word)
				if v == nil || notAVariable[v[1]] {
					continue
				}
				checked++
				if !known[v[1]] {
					t.Errorf("%s names %s, which is no knob, no compose or Makefile variable, and not in otherVariables", page, v[1])
				}
			}
		}
	}
	if checked < 100 {
		t.Fatalf("checked only %d names: the parser is out of date", checked)
	}
}

// notAVariable are upper-case words in code spans that are not variables.
var notAVariable = map[string]bool{
	"POST": true, "HTTP": true, "JSON": true, "FATAL": true, "NULL": true, "DISCARD": true,
	"SELECT": true, "CREATE": true, "DATABASE": true, "CONNECTION": true, "LISTEN": true,
	"ALERTS": true, "HEAD": true, "TRACE": true, "PATCH": true, "DELETE": true, "OPTIONS": true,
	"CONNECT": true, "SHOW": true, "POOLS": true, "STATS": true, "ALL": true,
	"STATS_TOTALS": true, "LISTS": true, "CONFIG": true, "CLIENTS": true, "DATABASES": true, "VERSION": true, // PgBouncer's SHOW commands
	"TCP_USER_TIMEOUT": true, "IP_BIND_ADDRESS_NO_PORT": true, // socket options
	"FILE":   true,                               // a placeholder
	"MISSED": true, "READ": true, "JUDGED": true, // the scenario verdicts (docs/lab.md: NOT JUDGED)
}
