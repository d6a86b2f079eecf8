package e2e

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"
)

// pitfallRules is prometheus/rules/pitfalls.yml as these tests read it.
type pitfallRules struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Record      string            `yaml:"record"`
			Alert       string            `yaml:"alert"`
			Expr        string            `yaml:"expr"`
			For         string            `yaml:"for"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

// pitfalls are the catalog's pitfalls that pitfalls.yml names, each by
// one alert (lab/scenario/catalog/<name>.yaml, docs/scenarios/<name>.md).
var pitfalls = []string{
	"pool-starvation", "backpressure-void", "per-request-memory", "os-thread-pinning",
	"blocked-event-loop", "retry-storm", "adaptive-limit", "connection-leak",
	"nested-acquire", "tx-across-downstream", "too-many-clients", "db-latency", "db-restart",
}

// allowedPrefixes are the metric families a real service and its database
// expose: the services' request, pool, limiter, queue and runtime metrics,
// postgres_exporter's and PgBouncer's exporter's. Not orderlab_knob_ (a
// user's service has no knobs), not what the lab's own programs export.
var allowedPrefixes = []string{
	"orderlab_http_", "orderlab_db_", "orderlab_limiter_", "orderlab_pipeline_", "orderlab_orders_",
	"go_", "process_", "pg_", "pgbouncer_",
}

// A pitfall rule reads only what a service and its database expose: every
// metric its expression or its annotations' queries name is of an allowed
// family or a recording rule's, and none is a knob or a metric of lab/ or
// loadtest/.
func TestPitfallRulesReadOnlyServiceMetrics(t *testing.T) {
	records := map[string]bool{}
	for _, rf := range loadRules(t) {
		for _, g := range rf.Groups {
			for _, r := range g.Rules {
				if r.Record != "" {
					records[r.Record] = true
				}
			}
		}
	}
	denied := labMetrics(t)
	var rf pitfallRules
	decodeFile(t, filepath.Join(root, "prometheus", "rules", "pitfalls.yml"), yamlUnmarshal, &rf)
	n := 0
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			name := r.Alert + r.Record
			exprs := []string{r.Expr}
			for k, a := range r.Annotations {
				for _, q := range templateQueries(a) {
					exprs = append(exprs, q)
					t.Logf("%s annotation %s queries %s", name, k, q)
				}
			}
			for _, e := range exprs {
				for _, m := range forbiddenMetrics(e, records, denied) {
					t.Errorf("%s reads %s: not a metric a service or its database exposes", name, m)
				}
				n++
			}
		}
	}
	if n < 20 {
		t.Fatalf("read only %d expressions in pitfalls.yml", n)
	}
}

// The checker itself: a knob, the lab's background counter or an unknown
// family is caught, wherever it stands in an expression; label names,
// label values, functions and grouping labels are not metrics.
func TestForbiddenMetricsChecker(t *testing.T) {
	records := map[string]bool{"job:orderlab_db_pool_utilization:avg30s": true}
	denied := labMetrics(t)
	for expr, want := range map[string][]string{
		`sum by (job) (rate(orderlab_db_errors_total{class="unavailable"}[1m])) > 0`:                       nil,
		`job:orderlab_db_pool_utilization:avg30s >= 0.9 and on (job) go_threads > 10`:                      nil,
		`label_replace(pg_stat_activity_count{state="active"}, "job", "$1", "application_name", "x-(.+)")`: nil,
		`max by (job) (orderlab_knob_value{knob="LEAK_EVERY"}) > 0`:                                        {"orderlab_knob_value"},
		`rate(orderlab_background_requests_total[1m]) unless on (job) orderlab_http_requests_in_flight`:    {"orderlab_background_requests_total"},
		`orderlab_audit_pending > 10 or job:unknown:rate1m`:                                                {"orderlab_audit_pending", "job:unknown:rate1m"},
		`max by (job) (go_gc_gomemlimit_bytes) < 4e18 or 0 * go_threads + 0x20000000`:                      nil,
	} {
		if got := forbiddenMetrics(expr, records, denied); !slices.Equal(got, want) {
			t.Errorf("forbiddenMetrics(%s) = %v, want %v", expr, got, want)
		}
	}
	if !denied["orderlab_background_requests_total"] {
		t.Errorf("labMetrics found %v, not the background load's counter: its parser is out of date", denied)
	}
}

// Each pitfall has one alert, named Pitfall and the words of its name,
// each capitalised, labelled with the pitfall, the service (the scrape
// job) and a severity; its annotations are a summary, the scenario's page,
// and the evidence as "signal=VALUE UNIT; ...". Its `for` keeps a pitfall
// named within a minute of its start.
func TestPitfallAlertsFollowTheContract(t *testing.T) {
	var rf pitfallRules
	decodeFile(t, filepath.Join(root, "prometheus", "rules", "pitfalls.yml"), yamlUnmarshal, &rf)
	evidence := regexp.MustCompile(`^[a-z][a-z0-9_]*=(\{\{.*?\}\}|[0-9.e+-]+) (s|ms|%|/s|bytes|goroutines|threads|connections|ratio|count)$`)
	seen := map[string]bool{}
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			p := r.Labels["pitfall"]
			if !slices.Contains(pitfalls, p) {
				t.Errorf("%s: pitfall label %q is not a catalog pitfall", r.Alert, p)
				continue
			}
			if seen[p] {
				t.Errorf("%s: a second alert for %s", r.Alert, p)
			}
			seen[p] = true
			if want := "Pitfall" + camel(p); r.Alert != want {
				t.Errorf("alert %s for %s, want the name %s", r.Alert, p, want)
			}
			if r.Labels["service"] != "{{ $labels.job }}" || r.Labels["severity"] != "warning" || len(r.Labels) != 3 {
				t.Errorf("%s: labels %v, want pitfall, service {{ $labels.job }} and severity warning", r.Alert, r.Labels)
			}
			page := "docs/scenarios/" + p + ".md"
			if r.Annotations["runbook_url"] != page {
				t.Errorf("%s: runbook_url %q, want %s", r.Alert, r.Annotations["runbook_url"], page)
			} else if _, err := os.Stat(filepath.Join(root, page)); err != nil {
				t.Errorf("%s: %v", r.Alert, err)
			}
			if !strings.Contains(r.Annotations["summary"], "$value") {
				t.Errorf("%s: the summary does not state the value", r.Alert)
			}
			for item := range strings.SplitSeq(r.Annotations["evidence"], "; ") {
				if !evidence.MatchString(item) {
					t.Errorf("%s: evidence item %q is not signal=VALUE UNIT", r.Alert, item)
				}
			}
			if d, err := time.ParseDuration(r.For); err != nil || d <= 0 || d > 30*time.Second {
				t.Errorf("%s: for %q, want more than 0 and at most 30s", r.Alert, r.For)
			}
		}
	}
	for _, p := range pitfalls {
		if !seen[p] {
			t.Errorf("no alert names %s", p)
		}
	}
}

// camel joins the words of a catalog name, each capitalised, as the alert
// PitfallOsThreadPinning does for os-thread-pinning.
func camel(name string) string {
	var b strings.Builder
	for w := range strings.SplitSeq(name, "-") {
		r := []rune(w)
		r[0] = unicode.ToUpper(r[0])
		b.WriteString(string(r))
	}
	return b.String()
}

var (
	stringLit     = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'`)
	selector      = regexp.MustCompile(`\{[^{}]*\}`)
	rangeSel      = regexp.MustCompile(`\[[^\]]*\]`)
	grouping      = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	number        = regexp.MustCompile(`\b0[xX][0-9a-fA-F]+\b|\b[0-9]+(\.[0-9]*)?([eE][+-]?[0-9]+)?\b`)
	identifier    = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*(\s*\()?`)
	promqlKeyword = []string{"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring", "group_left", "group_right", "inf", "nan"}
)

// forbiddenMetrics lists the metric names expr reads that are neither of
// an allowed family nor a recording rule of records, and those of denied
// in any case, in order. It reads PromQL lexically: strings, label
// matchers, ranges, grouping labels and numbers (4e18 is not the metric
// e18) are removed, and an identifier before "(" is a function.
func forbiddenMetrics(expr string, records, denied map[string]bool) []string {
	e := stringLit.ReplaceAllString(expr, `""`)
	e = selector.ReplaceAllString(e, " ")
	e = rangeSel.ReplaceAllString(e, " ")
	e = grouping.ReplaceAllString(e, " ")
	e = number.ReplaceAllString(e, " ")
	var out []string
	for _, m := range identifier.FindAllString(e, -1) {
		if strings.HasSuffix(m, "(") || slices.Contains(promqlKeyword, strings.ToLower(m)) {
			continue
		}
		allowed := records[m] || slices.ContainsFunc(allowedPrefixes, func(p string) bool { return strings.HasPrefix(m, p) })
		if denied[m] || strings.HasPrefix(m, "orderlab_knob_") || !allowed {
			out = append(out, m)
		}
	}
	return out
}

// templateQueries returns the PromQL a Prometheus template queries: its
// string literals that name a metric (the format of printf ... | query),
// with the verbs filled in.
func templateQueries(tmpl string) []string {
	var out []string
	for _, lit := range regexp.MustCompile(`"((?:[^"\\]|\\.)*)"`).FindAllStringSubmatch(tmpl, -1) {
		s := strings.ReplaceAll(lit[1], `\"`, `"`)
		if !strings.Contains(s, "_") || !strings.ContainsAny(s, "{(:") {
			continue // a format such as "%.3g"
		}
		out = append(out, strings.NewReplacer("%q", `"x"`, "%s", "x").Replace(s))
	}
	return out
}

// labMetrics are the metric families the lab's own programs (lab/,
// loadtest/) export: nothing a user's service has.
func labMetrics(t *testing.T) map[string]bool {
	t.Helper()
	name := regexp.MustCompile(`Name:\s*"(orderlab_[a-z0-9_]+)"`)
	out := map[string]bool{}
	for _, dir := range []string{"lab", "loadtest"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range name.FindAllSubmatch(data, -1) {
				out[string(m[1])] = true
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}
