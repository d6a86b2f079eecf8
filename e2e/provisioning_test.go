package e2e

import (
	"path/filepath"
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
