package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/goccy/go-yaml"
)

// root is the repository root, relative to this package's directory (where
// go test runs).
const root = ".."

// jsonUnmarshal and yamlUnmarshal are the decoders decodeFile takes.
var (
	jsonUnmarshal = json.Unmarshal
	yamlUnmarshal = func(data []byte, v any) error { return yaml.Unmarshal(data, v) }
)

// decodeFile reads path and decodes it into v.
func decodeFile(t *testing.T, path string, unmarshal func([]byte, any) error, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// decodeGlob decodes every file that matches pattern (relative to root),
// keyed by file name. No match fails the test.
func decodeGlob[T any](t *testing.T, pattern string, unmarshal func([]byte, any) error) map[string]T {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, pattern))
	if err != nil || len(files) == 0 {
		t.Fatalf("no %s (err %v)", pattern, err)
	}
	out := map[string]T{}
	for _, f := range files {
		var v T
		decodeFile(t, f, unmarshal, &v)
		out[filepath.Base(f)] = v
	}
	return out
}

// boardTarget is one query of one panel of a provisioned dashboard.
type boardTarget struct {
	Board    string
	Panel    string
	Repeat   string // template variable the panel repeats over, if any
	RefID    string
	Expr     string
	Exemplar bool
}

// board is the part of Grafana's dashboard JSON these tests read.
type board struct {
	UID           string  `json:"uid"`
	Title         string  `json:"title"`
	SchemaVersion int     `json:"schemaVersion"`
	Panels        []panel `json:"panels"`
	Templating    struct {
		List []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Query any    `json:"query"`
		} `json:"list"`
	} `json:"templating"`
	Annotations struct {
		List []struct {
			Name       string        `json:"name"`
			Datasource datasourceRef `json:"datasource"`
			Expr       string        `json:"expr"`
		} `json:"list"`
	} `json:"annotations"`
}

type panel struct {
	ID         int           `json:"id"`
	Type       string        `json:"type"`
	Title      string        `json:"title"`
	Repeat     string        `json:"repeat"`
	Datasource datasourceRef `json:"datasource"`
	GridPos    struct {
		X, Y, W, H int
	} `json:"gridPos"`
	Targets []struct {
		RefID    string `json:"refId"`
		Expr     string `json:"expr"`
		Exemplar bool   `json:"exemplar"`
	} `json:"targets"`
	Panels []panel `json:"panels"` // a collapsed row's panels
}

type datasourceRef struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

// loadBoards reads every dashboard Grafana provisions from grafana/dashboards.
func loadBoards(t *testing.T) map[string]board {
	t.Helper()
	return decodeGlob[board](t, "grafana/dashboards/*.json", jsonUnmarshal)
}

// allPanels flattens rows: panels of collapsed rows sit inside the row.
func allPanels(b board) []panel {
	var out []panel
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			out = append(out, p)
			walk(p.Panels)
		}
	}
	walk(b.Panels)
	return out
}

// boardTargets lists every PromQL query of every panel of every board,
// sorted for stable output.
func boardTargets(boards map[string]board) []boardTarget {
	var out []boardTarget
	for name, b := range boards {
		for _, p := range allPanels(b) {
			for _, tg := range p.Targets {
				out = append(out, boardTarget{
					Board: name, Panel: p.Title, Repeat: p.Repeat,
					RefID: tg.RefID, Expr: tg.Expr, Exemplar: tg.Exemplar,
				})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Board != out[j].Board {
			return out[i].Board < out[j].Board
		}
		if out[i].Panel != out[j].Panel {
			return out[i].Panel < out[j].Panel
		}
		return out[i].RefID < out[j].RefID
	})
	return out
}
