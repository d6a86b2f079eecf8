package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
			URL           string `yaml:"url"`
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

// traceIDVar is the data-link variable Grafana replaces with the value of
// the exemplar's trace_id field.
const traceIDVar = "${__value.raw}"

// provisionedDatasources returns the provisioned datasources by UID, and
// checks that exemplars link to their trace by URL.
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
			// Grafana turns a datasourceUid into an Explore query of type
			// "traceql", which its Jaeger datasource answers with nothing,
			// and anonymous viewers may not open Explore: a URL it must be.
			if e.DatasourceUID != "" {
				t.Errorf("datasource %s: exemplars link to datasource %q (type %q), which opens an empty Explore; link to the Jaeger UI by url", ds.UID, e.DatasourceUID, uids[e.DatasourceUID])
			}
			if tmpl := grafanaProvisioned(e.URL, nil); !strings.Contains(tmpl, traceIDVar) {
				t.Errorf("datasource %s: exemplar url %q becomes %q in Grafana, without %s (write $$ for a literal $)", ds.UID, e.URL, tmpl, traceIDVar)
			}
		}
		if ds.JSONData.TimeInterval != scrapeInterval {
			t.Errorf("datasource %s: timeInterval %q differs from the scrape interval %q", ds.UID, ds.JSONData.TimeInterval, scrapeInterval)
		}
	}
	return uids
}

// exemplarURLTemplates are the provisioned exemplar links as Grafana holds
// them, after it has read the provisioning file (no environment: the lab
// sets none that the file names).
func exemplarURLTemplates(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, ds := range readDatasources(t) {
		for _, e := range ds.JSONData.Exemplars {
			if e.URL != "" {
				out = append(out, grafanaProvisioned(e.URL, nil))
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no exemplar link by url in the provisioned datasources")
	}
	return out
}

// grafanaProvisioned is a provisioning file's string value as Grafana reads
// it: "$$" is a literal "$", and every other $NAME or ${NAME} is replaced by
// the environment variable (getenv; nil: none is set). This is the rule of
// Grafana's pkg/services/provisioning/values (interpolateValue), which also
// expands $__env{}, $__file{} and $__vault{}; the lab's files use none.
func grafanaProvisioned(value string, getenv func(string) string) string {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	parts := strings.Split(value, "$$")
	for i, p := range parts {
		parts[i] = os.Expand(p, getenv)
	}
	return strings.Join(parts, "$")
}

// dashboardProviderPath is where Grafana's file provider reads dashboards.
func dashboardProviderPath(t *testing.T) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(root, "grafana", "provisioning", "dashboards", "*.yml"))
	if len(files) != 1 {
		t.Fatalf("want one dashboard provider file, got %v", files)
	}
	var cfg struct {
		Providers []struct {
			Type    string `yaml:"type"`
			Options struct {
				Path string `yaml:"path"`
			} `yaml:"options"`
		} `yaml:"providers"`
	}
	decodeFile(t, files[0], yamlUnmarshal, &cfg)
	if len(cfg.Providers) != 1 || cfg.Providers[0].Type != "file" {
		t.Fatalf("want one file provider in %s", files[0])
	}
	return cfg.Providers[0].Options.Path
}

// provisionedURLs returns each provisioned datasource's URL by UID.
func provisionedURLs(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, ds := range readDatasources(t) {
		out[ds.UID] = ds.URL
	}
	return out
}

// TestGrafanaProvisionedValue: the provisioning rule the exemplar link
// depends on. Without the $$, Grafana would blank ${__value.raw}.
func TestGrafanaProvisionedValue(t *testing.T) {
	env := func(k string) string { return map[string]string{"PORT": "16686"}[k] }
	for in, want := range map[string]string{
		"http://127.0.0.1:16686/trace/$${__value.raw}": "http://127.0.0.1:16686/trace/${__value.raw}",
		"http://127.0.0.1:16686/trace/${__value.raw}":  "http://127.0.0.1:16686/trace/",
		"http://127.0.0.1:$PORT/trace/$$x":             "http://127.0.0.1:16686/trace/$x",
	} {
		if got := grafanaProvisioned(in, env); got != want {
			t.Errorf("grafanaProvisioned(%q) = %q, want %q", in, got, want)
		}
	}
}
