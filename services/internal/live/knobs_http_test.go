package live

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// Every problem type of the knob API is a heading of docs/reference/knobs.md.
func TestKnobProblemTypesAreDocumented(t *testing.T) {
	src, err := os.ReadFile("knobs_http.go")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../../docs/reference/knobs.md")
	if err != nil {
		t.Fatal(err)
	}
	types := regexp.MustCompile(`knobProblemBase \+ "([a-z-]+)"`).FindAllStringSubmatch(string(src), -1)
	if len(types) < 5 {
		t.Fatalf("found %d problem types in knobs_http.go", len(types))
	}
	for _, m := range types {
		if !strings.Contains(string(doc), "\n#### problem-"+m[1]+"\n") {
			t.Errorf("problem type %s has no heading in docs/reference/knobs.md", m[1])
		}
	}
}
