package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

// droppedTarget, as the address of a compose service in labPrometheusConfig's
// map, leaves out the jobs that scrape it: a service the run does not start.
const droppedTarget = "dropped"

// labPrometheusConfig returns prometheus/prometheus.yml with only the
// targets rewritten: each "<host>:<port>" through addrs (compose service
// name to local address), rule_files made absolute, and the jobs of the
// services addrs maps to droppedTarget left out. A target the map does not
// know fails the test, so a new scrape job cannot slip past the e2e.
func labPrometheusConfig(t *testing.T, addrs map[string]string) []byte {
	t.Helper()
	cfg := readPrometheusConfig(t)
	promDir, err := filepath.Abs(filepath.Join(root, "prometheus"))
	if err != nil {
		t.Fatal(err)
	}
	files, _ := cfg["rule_files"].([]any)
	for i, f := range files {
		files[i] = filepath.Join(promDir, f.(string))
	}
	jobs, _ := cfg["scrape_configs"].([]any)
	var kept []any
	for _, j := range jobs {
		job := j.(map[string]any)
		dropped := false
		statics, _ := job["static_configs"].([]any)
		for _, s := range statics {
			sc := s.(map[string]any)
			targets, _ := sc["targets"].([]any)
			for i, tg := range targets {
				host := strings.Split(tg.(string), ":")[0]
				addr, ok := addrs[host]
				if !ok {
					t.Fatalf("prometheus.yml: job %v scrapes %v, which the e2e does not run", job["job_name"], tg)
				}
				dropped = dropped || addr == droppedTarget
				targets[i] = addr
			}
		}
		if !dropped {
			kept = append(kept, job)
		}
	}
	cfg["scrape_configs"] = kept
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// globalScrapeInterval is prometheus.yml's global scrape_interval.
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
