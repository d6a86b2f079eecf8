package doccheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// excerpt is a fenced Go block that a page marks as quoted from a file.
var excerpt = regexp.MustCompile("(?s)<!-- excerpt: (\\S+) -->\n```go\n(.*?)\n```")

// quotes reports the first line of block not found in src after the line
// before it ("..." skips), or "" when block quotes src in order.
func quotes(block, src string) string {
	lines := strings.Split(src, "\n")
	i := 0
	for _, want := range strings.Split(block, "\n") {
		want = strings.TrimSpace(want)
		if want == "" || want == "..." {
			continue
		}
		for i < len(lines) && strings.TrimSpace(lines[i]) != want {
			i++
		}
		if i == len(lines) {
			return want
		}
		i++
	}
	return ""
}

func TestQuotesFindsAStaleExcerpt(t *testing.T) {
	src := "func f() {\n\ta()\n\tb()\n}\n"
	if l := quotes("func f() {\n...\n\tb()", src); l != "" {
		t.Errorf("an excerpt in order: %q not found", l)
	}
	if l := quotes("\tb()\n\ta()", src); l != "a()" {
		t.Errorf("an excerpt out of order: got %q, want a() reported", l)
	}
}

// TestExcerptsQuoteTheCode: each model's heart shown in the README and the
// decision guide is the code's, line for line in order, from the file it
// names; and each page shows the three models'.
func TestExcerptsQuoteTheCode(t *testing.T) {
	for _, page := range []string{"README.md", "docs/decision-guide.md"} {
		text, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Fatal(err)
		}
		found := excerpt.FindAllStringSubmatch(string(text), -1)
		if len(found) < 3 {
			t.Errorf("%s: %d excerpts, want one per model", page, len(found))
		}
		for _, m := range found {
			src, err := os.ReadFile(filepath.Join(root, m[1]))
			if err != nil {
				t.Errorf("%s: excerpt of %s: %v", page, m[1], err)
				continue
			}
			if l := quotes(m[2], string(src)); l != "" {
				t.Errorf("%s: the excerpt of %s has %q, which the code no longer has there", page, m[1], l)
			}
		}
	}
}
