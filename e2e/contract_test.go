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
	for _, m := range regexp.MustCompile("`((?:orderlab|go|process|pg)_[a-z0-9_]+)`").FindAllStringSubmatch(string(data), -1) {
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
// board (a panel or an annotation) or in a rule (no dead metrics: a metric nobody reads is a cost without a use), and the board and rules
// use no orderlab_ metric the contract does not define.
func TestMetricsContractCovered(t *testing.T) {
	var exprs []string
	boards := loadBoards(t)
	for _, tg := range boardTargets(boards) {
		exprs = append(exprs, tg.Expr)
	}
	for _, b := range boards {
		for _, a := range b.Annotations.List {
			exprs = append(exprs, a.Expr)
		}
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

	// The other direction: no invented names, ours or postgres_exporter's.
	for _, m := range regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`).FindAllString(all, -1) {
		if !strings.HasPrefix(m, "orderlab_") && !strings.HasPrefix(m, "pg_") {
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
