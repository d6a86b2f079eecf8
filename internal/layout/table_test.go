package layout_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestLayersTableMatchesTheRanks holds the layers table of
// docs/development.md (Layout) to serviceRank, both ways: every package
// sits in the layer the test ranks it in, and every ranked package is in
// the table.
func TestLayersTableMatchesTheRanks(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "development.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## Layout\n")
	if !ok {
		t.Fatal("docs/development.md has no Layout section")
	}
	row := regexp.MustCompile(`(?m)^\| (\d+) \| (.+) \|$`)
	pkg := regexp.MustCompile("`([a-z/]+)`")
	documented := map[string]int{}
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		layer, _ := strconv.Atoi(m[1])
		for _, p := range pkg.FindAllStringSubmatch(m[2], -1) {
			documented[p[1]] = layer
		}
	}
	if len(documented) == 0 {
		t.Fatal("docs/development.md, Layout: no layers table found")
	}
	for p, rank := range serviceRank {
		switch layer, ok := documented[p]; {
		case !ok:
			t.Errorf("%s (rank %d) is not in the layers table of docs/development.md", p, rank)
		case layer != rank:
			t.Errorf("docs/development.md puts %s in layer %d; internal/layout ranks it %d", p, layer, rank)
		}
	}
	for p := range documented {
		if _, ok := serviceRank[p]; !ok {
			t.Errorf("docs/development.md's layers table names %s, which serviceRank does not rank", p)
		}
	}
}
