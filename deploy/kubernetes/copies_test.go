package kubernetes_test

import (
	"bytes"
	"maps"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	"github.com/orderlab/orderlab/deploy/kubernetes"
)

// TestCopiesAreCurrent checks that the copies of the compose lab's sources
// under deploy/kubernetes are what `make k8s` makes of them now.
func TestCopiesAreCurrent(t *testing.T) {
	want, err := kubernetes.Copies(root)
	if err != nil {
		t.Fatal(err)
	}
	have := map[string][]byte{}
	for _, c := range kubernetes.CopyDirs {
		entries, err := os.ReadDir(filepath.FromSlash(c.Dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join(filepath.FromSlash(c.Dir), e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			have[path.Join(c.Dir, e.Name())] = data
		}
	}
	for _, name := range slices.Sorted(maps.Keys(want)) {
		if !bytes.Equal(have[name], want[name]) {
			t.Errorf("%s is not what its source makes of it: run make k8s", name)
		}
	}
	for name := range have {
		if _, ok := want[name]; !ok {
			t.Errorf("%s has no source any more: run make k8s", name)
		}
	}
}

// sources reads the files of the compose lab matching glob, by base name.
func sources(t *testing.T, glob string) map[string]string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(glob)))
	if err != nil || len(names) == 0 {
		t.Fatalf("%s: %v (%d files)", glob, err, len(names))
	}
	files := map[string]string{}
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Base(n)] = string(data)
	}
	return files
}

// checkData checks that a ConfigMap holds exactly the files, byte for byte.
func checkData(t *testing.T, r *rendered, cm *corev1.ConfigMap, files map[string]string) {
	t.Helper()
	if !maps.Equal(cm.Data, files) {
		t.Errorf("%s: ConfigMap %s holds %v, not the compose lab's files %v byte for byte",
			r.overlay, cm.Name, slices.Sorted(maps.Keys(cm.Data)), slices.Sorted(maps.Keys(files)))
	}
}

// TestLabCarriesTheComposeLabsRulesAndBoard: the lab's Prometheus and
// Grafana get the compose lab's rules, provisioning and board, unchanged.
func TestLabCarriesTheComposeLabsRulesAndBoard(t *testing.T) {
	r := overlay(t, "lab")
	checkData(t, r, configMap(t, r, "prometheus-rules"), sources(t, "prometheus/rules/*.yml"))
	checkData(t, r, configMap(t, r, "grafana-datasources"), sources(t, "grafana/provisioning/datasources/*.yml"))
	checkData(t, r, configMap(t, r, "grafana-dashboard-providers"), sources(t, "grafana/provisioning/dashboards/*.yml"))
	checkData(t, r, configMap(t, r, "orderlab-dashboards"), sources(t, "grafana/dashboards/*.json"))

	// The config differs from compose's in its targets only.
	var k8s, compose map[string]any
	decode(t, configMap(t, r, "prometheus-config").Data["prometheus.yml"], &k8s)
	decode(t, sources(t, "prometheus/prometheus.yml")["prometheus.yml"], &compose)
	for _, key := range []string{"global", "storage", "rule_files"} {
		if !reflect.DeepEqual(k8s[key], compose[key]) {
			t.Errorf("prometheus.yml: %s is %v here, %v in the compose lab", key, k8s[key], compose[key])
		}
	}
}

// TestJaegerIsTheComposeLabs: base/'s Jaeger configuration is compose.yaml's,
// with its JAEGER_MAX_TRACES default.
func TestJaegerIsTheComposeLabs(t *testing.T) {
	var compose struct {
		Configs map[string]struct {
			Content string `json:"content"`
		} `json:"configs"`
	}
	decode(t, sources(t, "compose.yaml")["compose.yaml"], &compose)
	var want, have any
	decode(t, strings.ReplaceAll(compose.Configs["jaeger"].Content, "${JAEGER_MAX_TRACES:-50000}", "50000"), &want)
	decode(t, configMap(t, overlay(t, "lab"), "jaeger").Data["config.yaml"], &have)
	if want == nil || !reflect.DeepEqual(have, want) {
		t.Errorf("Jaeger's config differs from compose.yaml's:\nhere    %v\ncompose %v", have, want)
	}
}

func decode(t *testing.T, data string, v any) {
	t.Helper()
	// Not strict: compose.yaml merges YAML anchors, whose overridden keys
	// a strict decoder calls duplicates.
	if err := yaml.Unmarshal([]byte(data), v); err != nil {
		t.Fatal(err)
	}
}

// TestOperatorOverlayMatchesKubePrometheusStack: the monitors and rules
// carry the label the stack selects by, the board the label its Grafana
// sidecar loads, the rules are the compose lab's, and the PodMonitors scrape
// every replica of the three services as job="<service>" and
// postgres_exporter as job="postgres".
func TestOperatorOverlayMatchesKubePrometheusStack(t *testing.T) {
	r := overlay(t, "operator")
	board := configMap(t, r, "orderlab-dashboards")
	checkData(t, r, board, sources(t, "grafana/dashboards/*.json"))
	if board.Labels["grafana_dashboard"] != "1" {
		t.Errorf("the board's ConfigMap is labelled %v, want grafana_dashboard: \"1\"", board.Labels)
	}

	rules := objectsOf[monitoringv1.PrometheusRule](r)
	files := sources(t, "prometheus/rules/*.yml")
	if len(rules) != len(files) {
		t.Errorf("%d PrometheusRules for %d rule files", len(rules), len(files))
	}
	for file, src := range files {
		name := "orderlab-" + strings.TrimSuffix(file, ".yml")
		pr := named(t, r, name, func(p *monitoringv1.PrometheusRule) string { return p.Name })
		var want monitoringv1.PrometheusRuleSpec
		if err := yaml.UnmarshalStrict([]byte(src), &want); err != nil {
			t.Fatalf("%s as a PrometheusRule spec: %v", file, err)
		}
		if len(want.Groups) == 0 || !reflect.DeepEqual(pr.Spec, want) {
			t.Errorf("PrometheusRule %s is not prometheus/rules/%s", name, file)
		}
		if pr.Labels[kubernetes.ReleaseLabel] != kubernetes.Release {
			t.Errorf("PrometheusRule %s: labels %v, want %s: %s", name, pr.Labels, kubernetes.ReleaseLabel, kubernetes.Release)
		}
	}

	monitors := objectsOf[monitoringv1.PodMonitor](r)
	if len(monitors) != 2 {
		t.Fatalf("%d PodMonitors, want 2 (the services, postgres_exporter)", len(monitors))
	}
	for _, pm := range monitors {
		if pm.Labels[kubernetes.ReleaseLabel] != kubernetes.Release {
			t.Errorf("PodMonitor %s: labels %v, want %s: %s", pm.Name, pm.Labels, kubernetes.ReleaseLabel, kubernetes.Release)
		}
	}
	pm := named(t, r, "orderlab", func(p *monitoringv1.PodMonitor) string { return p.Name })
	jobs := monitoredJobs(t, r, pm, func(w workload) string { return w.pod.Labels[pm.Spec.JobLabel] })
	if want := []string{"pipeline", "semaphore", "unbounded"}; !slices.Equal(jobs, want) {
		t.Errorf("PodMonitor %s makes the jobs %v, want the compose lab's %v", pm.Name, jobs, want)
	}
	// postgres_exporter as the compose lab's job "postgres": a fixed job
	// label, set by relabelling.
	pg := named(t, r, "orderlab-postgres", func(p *monitoringv1.PodMonitor) string { return p.Name })
	job := ""
	for _, ep := range pg.Spec.PodMetricsEndpoints {
		for _, rc := range ep.RelabelConfigs {
			if rc.TargetLabel == "job" && rc.Replacement != nil {
				job = *rc.Replacement
			}
		}
	}
	jobs = monitoredJobs(t, r, pg, func(workload) string { return job })
	if want := []string{"postgres"}; !slices.Equal(jobs, want) {
		t.Errorf("PodMonitor %s makes the jobs %v, want the compose lab's %v", pg.Name, jobs, want)
	}
}

// monitoredJobs returns job(w), sorted, for each workload w the PodMonitor
// pm selects, and checks that each names the ports pm scrapes.
func monitoredJobs(t *testing.T, r *rendered, pm *monitoringv1.PodMonitor, job func(workload) string) []string {
	t.Helper()
	sel, err := labelsSelector(pm.Spec.Selector.MatchLabels)
	if err != nil {
		t.Fatal(err)
	}
	var jobs []string
	for _, w := range workloads(r) {
		if !sel.Matches(labels.Set(w.pod.Labels)) {
			continue
		}
		jobs = append(jobs, job(w))
		for _, ep := range pm.Spec.PodMetricsEndpoints {
			if !slices.ContainsFunc(w.pod.Spec.Containers[0].Ports, func(p corev1.ContainerPort) bool { return p.Name == *ep.Port }) {
				t.Errorf("PodMonitor %s scrapes port %q, which %s does not name", pm.Name, *ep.Port, w)
			}
		}
	}
	slices.Sort(jobs)
	return jobs
}

func labelsSelector(m map[string]string) (labels.Selector, error) {
	return labels.ValidatedSelectorFromSet(m)
}
