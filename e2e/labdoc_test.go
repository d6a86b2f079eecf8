package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestLabDocStatesTheE2EKnobs: the table of docs/lab.md, "Compare the
// fixes", comes from this package's overload run, whose knobs differ from
// the lab's defaults; the paragraph before it names them, and each named
// value must be the one the run uses (labVars, labServiceVars), each knob
// of the run named.
func TestLabDocStatesTheE2EKnobs(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "docs", "lab.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## Compare the fixes\n")
	if !ok {
		t.Fatal("docs/lab.md has no Compare the fixes section")
	}
	para, _, ok := strings.Cut(section, "\n|  |")
	if !ok {
		t.Fatal("docs/lab.md, Compare the fixes: no table")
	}
	stated := map[string]string{}
	for _, m := range regexp.MustCompile("`([A-Z_]+)=([^`]+)`").FindAllStringSubmatch(para, -1) {
		stated[m[1]] = m[2]
	}
	want := map[string]string{}
	for _, k := range []string{"DB_MAX_CONNS", "REQUEST_TIMEOUT", "AUDIT_DELAY", "LIMIT_WAIT", "QUEUE_CAPACITY", "BATCH_MAX", "ENQUEUE_WAIT"} {
		want[k] = labVars[k]
	}
	for _, knobs := range labServiceVars {
		for k, v := range knobs {
			want[k] = v
		}
	}
	for k, v := range want {
		if stated[k] != v {
			t.Errorf("docs/lab.md, Compare the fixes: %s is %q in the text, %q in the run", k, stated[k], v)
		}
	}
	for k := range stated {
		if _, ok := want[k]; !ok {
			t.Errorf("docs/lab.md, Compare the fixes: names %s, which the run does not set", k)
		}
	}
	if !strings.Contains(para, "100 closed-loop") || labLoad.clients != 100 {
		t.Errorf("docs/lab.md, Compare the fixes: the clients per service (%d in the run) are not stated", labLoad.clients)
	}
}

// TestDocsStateTheComposeMinimum: compose.yaml's inline configs.content
// needs Compose 2.23.1 and depends_on.required 2.20; the pages that say how
// to start the lab name the later of the two.
func TestDocsStateTheComposeMinimum(t *testing.T) {
	compose, err := os.ReadFile(filepath.Join(root, "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := ""
	switch {
	case regexp.MustCompile(`(?m)^\s+content: `).Match(compose):
		want = "Compose 2.23.1 or later"
	case regexp.MustCompile(`(?m)^\s+required: `).Match(compose):
		want = "Compose 2.20 or later"
	default:
		t.Fatal("compose.yaml uses neither configs.content nor depends_on.required: say what it needs, and update this test")
	}
	for _, page := range []string{"README.md", "docs/lab.md"} {
		data, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.ReplaceAll(string(data), "**", ""), want) {
			t.Errorf("%s does not say %q, which compose.yaml needs", page, want)
		}
	}
}
