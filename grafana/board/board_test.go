package board

//lint:file-ignore SA1019 the v1 dashboard JSON is what the board provisions (see board.go)

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// TestCommittedJSONIsGenerated keeps grafana/dashboards in step with this
// package: Grafana provisions the JSON files, not the Go code.
func TestCommittedJSONIsGenerated(t *testing.T) {
	files, err := Files()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join("..", "dashboards", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("grafana/dashboards/%s is stale: run `go run ./grafana/generate` (make dashboards)", name)
		}
	}
}

// TestEveryQueryFollowsTheServiceVariable checks that every Prometheus
// expression on the board, in panels and in annotations, selects on
// $service, so picking a service in the variable narrows every panel.
func TestEveryQueryFollowsTheServiceVariable(t *testing.T) {
	d, err := PoolStarvation()
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	exprs := collectExprs(doc)
	// 66 panel targets and the alert annotation: fewer means the walk
	// missed them, not that the board is clean.
	if len(exprs) < 67 {
		t.Fatalf("found %d expressions on the board, want at least 67", len(exprs))
	}
	serverWideExprs, poolerExprs := 0, 0
	for _, e := range exprs {
		metrics := metricRef.FindAllStringSubmatch(e, -1)
		if len(metrics) == 0 {
			t.Errorf("no metric found in %q", e)
		}
		serverWide := true
		for _, m := range metrics {
			name, selector := m[1], m[2]
			// pgbouncer_exporter's series: the pooler's, shared by the
			// three services, so they cannot follow $service.
			if strings.HasPrefix(name, "pgbouncer_") {
				if !strings.Contains(selector, poolerMatcher) {
					t.Errorf("%s without %s in %q", name, poolerMatcher, e)
				}
				continue
			}
			if !strings.HasPrefix(name, "pg_") {
				serverWide = false
				if !strings.Contains(selector, serviceMatcher) {
					t.Errorf("%s without %s in %q", name, serviceMatcher, e)
				}
				continue
			}
			// postgres_exporter's series: the exporter's job, and the
			// picked services' application_name unless server-wide.
			if !strings.Contains(selector, serverMatcher) {
				t.Errorf("%s without %s in %q", name, serverMatcher, e)
			}
			if strings.Contains(selector, appMatcher) {
				serverWide = false
			} else if !serverWideSeries[name] {
				t.Errorf("%s without %s in %q", name, appMatcher, e)
			}
		}
		switch {
		case strings.Contains(e, "pgbouncer_"):
			poolerExprs++
		case serverWide:
			serverWideExprs++
		}
	}
	// The PgBouncer row: clients waiting and served, servers active, idle
	// and the pool size, the wait per server assignment.
	if poolerExprs != 6 {
		t.Errorf("%d expressions read pgbouncer_exporter, want the PgBouncer row's 6", poolerExprs)
	}
	// max_connections and all backends, on the server backends panel.
	if serverWideExprs != 2 {
		t.Errorf("%d expressions ignore $service, want the 2 server-wide ones", serverWideExprs)
	}
}

// serverWideSeries are the postgres_exporter series a panel may show for the
// whole server, whatever $service picks: the limit the services share and
// every backend counted against it.
var serverWideSeries = map[string]bool{
	"pg_settings_max_connections":  true,
	"pg_stat_activity_count":       true,
	"pg_stat_database_xact_commit": true, // narrowed by an "and on (datname)" to the picked services' databases
}

// metricRef finds the metric names of the board's series (the services'
// orderlab_, go_ and process_ families, the recording rules' job:orderlab_,
// postgres_exporter's pg_, pgbouncer_exporter's pgbouncer_ and ALERTS) with the selector that follows them,
// if any.
var metricRef = regexp.MustCompile(`\b((?:job:)?orderlab_[\w:]*|go_\w+|process_\w+|pg_\w+|pgbouncer_\w+|ALERTS)(\{[^}]*\})?`)

// collectExprs returns the value of every "expr" key in a decoded JSON
// document.
func collectExprs(v any) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && k == "expr" {
				out = append(out, s)
				continue
			}
			out = append(out, collectExprs(x)...)
		}
	case []any:
		for _, x := range v {
			out = append(out, collectExprs(x)...)
		}
	}
	return out
}

// TestCommittedJSONIsStrictlyValid parses every committed dashboard with
// the SDK's strict decoder (unknown fields are errors) and validates it,
// with the panel and query plugins of the pinned Grafana registered.
func TestCommittedJSONIsStrictlyValid(t *testing.T) {
	plugins.RegisterDefaultPlugins()
	files, err := filepath.Glob(filepath.Join("..", "dashboards", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no dashboards (err %v)", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var d dashboard.Dashboard
		if err := noBuildErrors(d.UnmarshalJSONStrict(data)); err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if err := noBuildErrors(d.Validate()); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// noBuildErrors turns the SDK's empty cog.BuildErrors, which it returns as a
// non-nil error, into nil.
func noBuildErrors(err error) error {
	var be cog.BuildErrors
	if errors.As(err, &be) && len(be) == 0 {
		return nil
	}
	return err
}

// TestFrontPagePanelTableIsGenerated keeps the front page's copy of the
// panels' ids (lab/front/mystery/boardpanels_gen.go) in step with the board: a
// panel moved or renamed would otherwise open the wrong one.
func TestFrontPagePanelTableIsGenerated(t *testing.T) {
	want, err := PanelTable()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", "..", "lab", "front", "mystery", "boardpanels_gen.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("lab/front/mystery/boardpanels_gen.go is stale: run `go run ./grafana/generate` (make dashboards)")
	}
	ids, err := PanelIDs()
	if err != nil {
		t.Fatal(err)
	}
	// The pitfall alerts' panel sits at the top, under the scoreboard.
	if ids[FiringTitle] != 3 {
		t.Errorf("%q has id %d, want 3: the Overview row, right after the scoreboard", FiringTitle, ids[FiringTitle])
	}
}
