package knob_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orderlab/orderlab/services/internal/knob"
)

// The knobs table of docs/reference/knobs.md is the declarations, row for
// row and in their order (knob.Row renders one).
func TestDocsTableMatchesTheDeclarations(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "docs", "reference", "knobs.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## The table\n")
	if !ok {
		t.Fatal(`docs/reference/knobs.md has no "## The table" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var rows []string
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(line, "| `") {
			rows = append(rows, line)
		}
	}
	for i, k := range knob.All {
		want := knob.Row(k)
		switch {
		case i >= len(rows):
			t.Errorf("no row for %s; want\n%s", k.Name, want)
		case rows[i] != want:
			t.Errorf("row %d disagrees with the declaration of %s:\n got %s\nwant %s", i+1, k.Name, rows[i], want)
		}
	}
	for _, r := range rows[min(len(rows), len(knob.All)):] {
		t.Errorf("row of no declared knob: %s", r)
	}
}
