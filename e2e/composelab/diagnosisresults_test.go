package composelab

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDiagnosisReportsMatchTheirJSON: every committed diagnosis report's
// Markdown is what its JSON renders.
func TestDiagnosisReportsMatchTheirJSON(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(root, "docs", "results", "diagnosis", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no diagnosis report under docs/results/diagnosis")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var r diagnosisReport
		if err := json.Unmarshal(data, &r); err != nil || r.Schema != diagnosisSchema {
			t.Fatalf("%s: %v (schema %q, want %q)", f, err, r.Schema, diagnosisSchema)
		}
		md, err := os.ReadFile(strings.TrimSuffix(f, ".json") + ".md")
		if err != nil {
			t.Fatal(err)
		}
		if got := renderDiagnosis(r); got != string(md) {
			t.Errorf("%s: the Markdown beside it is not what it renders; write it again with renderDiagnosis", f)
		}
	}
}
