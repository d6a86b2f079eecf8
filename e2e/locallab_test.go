//go:build linux

package e2e

import (
	"path/filepath"
	"reflect"
	"testing"
)

// TestLocalLabConfig: deploy/local/prometheus.yml is the compose config
// with its targets on 127.0.0.1 at the local lab's ports, without the
// postgres and pgbouncer jobs (no exporter runs there) and its rules found
// from deploy/local.
func TestLocalLabConfig(t *testing.T) {
	compose := labPrometheusConfig(t, map[string]string{
		"unbounded": "127.0.0.1:9091", "semaphore": "127.0.0.1:9092", "pipeline": "127.0.0.1:9093",
		"background": "127.0.0.1:9095", "localhost": "127.0.0.1:9090",
		"postgres-exporter": droppedTarget, "pgbouncer-exporter": droppedTarget,
	})
	var want, got map[string]any
	if err := yamlUnmarshal(compose, &want); err != nil {
		t.Fatal(err)
	}
	want["rule_files"] = []any{"../../prometheus/rules/*.yml"}
	decodeFile(t, filepath.Join(root, "deploy", "local", "prometheus.yml"), yamlUnmarshal, &got)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("deploy/local/prometheus.yml:\n%v\nwant prometheus/prometheus.yml moved to the local ports:\n%v", got, want)
	}
}
