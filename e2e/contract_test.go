package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// ruleFile is the part of a Prometheus rule file these tests read.
type ruleFile struct {
	Groups []struct {
		Rules []struct {
			Record string `yaml:"record"`
			Expr   string `yaml:"expr"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

// loadRules reads prometheus/rules/*.yml, the files prometheus.yml loads.
func loadRules(t *testing.T) map[string]ruleFile {
	t.Helper()
	return decodeGlob[ruleFile](t, "prometheus/rules/*.yml", yamlUnmarshal)
}

// contractMetrics lists every metric name docs/metrics.md fixes.
func contractMetrics(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "docs", "metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var names []string
	for _, m := range regexp.MustCompile("`((?:orderlab|go|process)_[a-z0-9_]+)`").FindAllStringSubmatch(string(data), -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			names = append(names, m[1])
		}
	}
	if len(names) < 30 {
		t.Fatalf("docs/metrics.md: found only %d metric names, the parser is out of date", len(names))
	}
	return names
}

// TestMetricsContractCovered: every metric of docs/metrics.md is on the
// board or in a rule (STYLE.md: no dead metrics), and the board and rules
// use no orderlab_ metric the contract does not define.
func TestMetricsContractCovered(t *testing.T) {
	var exprs []string
	for _, tg := range boardTargets(loadBoards(t)) {
		exprs = append(exprs, tg.Expr)
	}
	records := map[string]bool{}
	for _, rf := range loadRules(t) {
		for _, g := range rf.Groups {
			for _, r := range g.Rules {
				exprs = append(exprs, r.Expr)
				if r.Record != "" {
					records[r.Record] = true
				}
			}
		}
	}
	all := strings.Join(exprs, "\n")

	contract := contractMetrics(t)
	for _, name := range contract {
		re := regexp.MustCompile(`(^|[^a-zA-Z0-9_:])` + regexp.QuoteMeta(name) + `(_bucket|_sum|_count)?($|[^a-zA-Z0-9_:])`)
		if !re.MatchString(all) {
			t.Errorf("%s (docs/metrics.md) is on no panel and in no rule", name)
		}
	}

	// The other direction: no invented names.
	for _, m := range regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`).FindAllString(all, -1) {
		if !strings.HasPrefix(m, "orderlab_") {
			continue
		}
		base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(m, "_bucket"), "_sum"), "_count")
		if !slices.Contains(contract, m) && !slices.Contains(contract, base) {
			t.Errorf("%s is not in docs/metrics.md", m)
		}
	}

	// Recording rules the board reads must exist.
	for _, m := range regexp.MustCompile(`[a-z_]+:orderlab_[a-z0-9_]+:[a-z0-9_]+`).FindAllString(all, -1) {
		if !records[m] {
			t.Errorf("%s is used but no rule records it", m)
		}
	}
}

// TestBoard checks the main board's structure: what Grafana needs to load it
// and what the lab promises (issue 4).
func TestBoard(t *testing.T) {
	boards := loadBoards(t)
	b, ok := boards["orderlab-pool-starvation.json"]
	if !ok {
		t.Fatal("grafana/dashboards/orderlab-pool-starvation.json missing")
	}
	if b.Title != "Orders: pool starvation and tail latency" {
		t.Errorf("title %q", b.Title)
	}
	if b.SchemaVersion < 41 {
		t.Errorf("schemaVersion %d: older than Grafana 12's", b.SchemaVersion)
	}

	var service bool
	for _, v := range b.Templating.List {
		if v.Name == "service" && v.Type == "query" && strings.Contains(toString(v.Query), "orderlab_service_info") {
			service = true
		}
	}
	if !service {
		t.Error("no $service query variable over orderlab_service_info")
	}

	var loadRuns bool
	for _, a := range b.Annotations.List {
		if a.Name == "Load runs" && a.Datasource.Type == "grafana" {
			loadRuns = true
		}
	}
	if !loadRuns {
		t.Error("no annotation query for load runs")
	}

	provisioned := provisionedDatasources(t)
	ids := map[int]bool{}
	var littles, exemplarHTTP, exemplarPool bool
	for _, p := range allPanels(b) {
		if p.Type == "row" {
			continue
		}
		if ids[p.ID] {
			t.Errorf("panel %q: duplicate id %d", p.Title, p.ID)
		}
		ids[p.ID] = true
		if p.GridPos.W <= 0 || p.GridPos.X+p.GridPos.W > 24 || p.GridPos.H <= 0 {
			t.Errorf("panel %q: gridPos %+v outside the 24-column grid", p.Title, p.GridPos)
		}
		if _, ok := provisioned[p.Datasource.UID]; !ok {
			t.Errorf("panel %q: datasource %q is not provisioned", p.Title, p.Datasource.UID)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q: no queries", p.Title)
		}
		for _, tg := range p.Targets {
			if !strings.Contains(tg.Expr, `job=~"$service"`) {
				t.Errorf("panel %q %s: query ignores $service: %s", p.Title, tg.RefID, tg.Expr)
			}
			if tg.Exemplar && strings.Contains(tg.Expr, "orderlab_http_request_duration_seconds") {
				exemplarHTTP = true
			}
			if tg.Exemplar && strings.Contains(tg.Expr, "orderlab_db_pool_acquire_wait_seconds") {
				exemplarPool = true
			}
		}
		if strings.Contains(p.Title, "Little's law") {
			littles = true
		}
	}
	if !littles {
		t.Error("no Little's-law panel")
	}
	if !exemplarHTTP || !exemplarPool {
		t.Error("request latency and acquire wait panels must show exemplars")
	}
}

// datasource is one entry of grafana/provisioning/datasources/datasources.yml.
type datasource struct {
	UID      string `yaml:"uid"`
	Type     string `yaml:"type"`
	URL      string `yaml:"url"`
	JSONData struct {
		TimeInterval string `yaml:"timeInterval"`
		Exemplars    []struct {
			Name          string `yaml:"name"`
			DatasourceUID string `yaml:"datasourceUid"`
		} `yaml:"exemplarTraceIdDestinations"`
	} `yaml:"jsonData"`
}

// readDatasources parses the provisioned datasources.
func readDatasources(t *testing.T) []datasource {
	t.Helper()
	var cfg struct {
		Datasources []datasource `yaml:"datasources"`
	}
	decodeFile(t, filepath.Join(root, "grafana", "provisioning", "datasources", "datasources.yml"), yamlUnmarshal, &cfg)
	return cfg.Datasources
}

// provisionedDatasources returns the provisioned datasources by UID, and
// checks that exemplars link to the trace datasource.
func provisionedDatasources(t *testing.T) map[string]string {
	t.Helper()
	datasources := readDatasources(t)
	scrapeInterval := globalScrapeInterval(t)
	uids := map[string]string{"-- Grafana --": "grafana"}
	for _, ds := range datasources {
		uids[ds.UID] = ds.Type
	}
	for _, ds := range datasources {
		if ds.Type != "prometheus" {
			continue
		}
		if len(ds.JSONData.Exemplars) == 0 {
			t.Errorf("datasource %s: no exemplarTraceIdDestinations", ds.UID)
		}
		for _, e := range ds.JSONData.Exemplars {
			if e.Name != "trace_id" {
				t.Errorf("datasource %s: exemplar label %q, the services use trace_id", ds.UID, e.Name)
			}
			if typ := uids[e.DatasourceUID]; typ != "jaeger" && typ != "tempo" {
				t.Errorf("datasource %s: exemplars link to %q, not a provisioned trace datasource", ds.UID, e.DatasourceUID)
			}
		}
		if ds.JSONData.TimeInterval != scrapeInterval {
			t.Errorf("datasource %s: timeInterval %q differs from the scrape interval %q", ds.UID, ds.JSONData.TimeInterval, scrapeInterval)
		}
	}
	return uids
}

func globalScrapeInterval(t *testing.T) string {
	t.Helper()
	cfg := readPrometheusConfig(t)
	global, _ := cfg["global"].(map[string]any)
	s, _ := global["scrape_interval"].(string)
	return s
}

// readPrometheusConfig reads prometheus/prometheus.yml as a generic map.
func readPrometheusConfig(t *testing.T) map[string]any {
	t.Helper()
	var cfg map[string]any
	decodeFile(t, filepath.Join(root, "prometheus", "prometheus.yml"), yamlUnmarshal, &cfg)
	return cfg
}

func toString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case map[string]any:
		s, _ := v["query"].(string)
		return s
	}
	return ""
}
