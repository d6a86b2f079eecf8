package doccheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// commentBreak is the break between a Go file's comment lines that follow
// one another: replaced by a space, it joins them into one line, so that a
// citation broken over two lines reads as one ("(README, When" + "the
// database fails)").
var commentBreak = regexp.MustCompile(`\n[ \t]*// ?`)

// citation is a page named in Go text: README, README.md, loadtest/README.md,
// lab/README.md
// or a docs/ page, with an optional #anchor, and an optional section after
// a comma, as the code writes them: "(docs/reference/http-servers.md,
// Limits)", "(README, When the database fails)", `(docs/lab.md, "The
// Grafana admin password")`. A section starts with a capital letter and
// ends at a closing bracket, a quote or a stop.
var citation = regexp.MustCompile(`(?:^|[\s("'` + "`" + `])((?:loadtest/|lab/)?README(?:\.md)?|docs/[A-Za-z0-9_/.-]+\.md)(#[a-z0-9-]+)?(?:, "?([A-Z][^)"\\.,;:\n]*))?`)

// headingsOf returns the headings of a Markdown page, as written.
func headingsOf(text string) []string {
	var hs []string
	for _, m := range heading.FindAllStringSubmatch(fence.ReplaceAllString(text, ""), -1) {
		hs = append(hs, linkChars.ReplaceAllString(m[1], "$1"))
	}
	return hs
}

// sectionIn says whether cited names a heading of hs: the heading itself,
// or the heading followed by more words of the sentence ("Errors says"),
// case aside.
func sectionIn(cited string, hs []string) bool {
	c := strings.ToLower(strings.TrimSpace(cited))
	return slices.ContainsFunc(hs, func(h string) bool {
		h = strings.ToLower(h)
		return c == h || strings.HasPrefix(c, h+" ") || strings.HasPrefix(h, c)
	})
}

// citedProblems returns what is wrong with every citation of a page in
// text (Go source): a page that does not exist, an anchor or a section it
// does not have.
func citedProblems(text string, r *resolver, headings func(string) ([]string, bool)) []string {
	text = commentBreak.ReplaceAllString(text, " ")
	var bad []string
	for _, m := range citation.FindAllStringSubmatch(text, -1) {
		page, anchor, section := m[1], m[2], strings.TrimSpace(m[3])
		if page == "README" || page == "loadtest/README" || page == "lab/README" {
			page += ".md"
		}
		if why := r.check(page + anchor); why != "" {
			bad = append(bad, page+anchor+": "+why)
			continue
		}
		if section == "" {
			continue
		}
		hs, _ := headings(page)
		if !sectionIn(section, hs) {
			bad = append(bad, page+", "+section+": no such heading in "+page)
		}
	}
	return bad
}

func TestCitedProblemsFindsStaleCitations(t *testing.T) {
	r := &resolver{t: t, pages: map[string]map[string]bool{}}
	hs := func(page string) ([]string, bool) {
		data, err := os.ReadFile(filepath.Join(root, page))
		return headingsOf(string(data)), err == nil
	}
	good := "// see docs/reference/http-servers.md, Limits): each\n// (README, The two\n// commands) and docs/results.md#the-machine.\n"
	if got := citedProblems(good, r, hs); len(got) != 0 {
		t.Errorf("citations of what exists: %v, want none", got)
	}
	for _, bad := range []string{
		"// (README, The pitfalls: 13)",
		"// (README, When\n// the database fails)",
		"// docs/no-such-page.md",
		"// docs/results.md#no-such-anchor",
		"// (docs/reference/api.md, Nothing like it)",
	} {
		if got := citedProblems(bad, r, hs); len(got) != 1 {
			t.Errorf("%q: %v, want one problem", bad, got)
		}
	}
}

// TestGoCommentsCiteWhatExists: every page a Go file cites (README or a
// docs/ page, with an anchor or a section) exists and has that anchor or
// section heading, so that a reader who follows a comment finds the page
// it meant.
func TestGoCommentsCiteWhatExists(t *testing.T) {
	r := &resolver{t: t, pages: map[string]map[string]bool{}}
	cache := map[string][]string{}
	hs := func(page string) ([]string, bool) {
		if h, ok := cache[page]; ok {
			return h, true
		}
		data, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			return nil, false
		}
		cache[page] = headingsOf(string(data))
		return cache[page], true
	}
	cmd := exec.Command("git", "ls-files", "--cached", "--others", "--exclude-standard", "*.go")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	files, cited := 0, 0
	for _, f := range strings.Fields(string(out)) {
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			continue
		}
		if strings.HasPrefix(f, "internal/doccheck/") {
			continue // this package's tests hold stale citations on purpose
		}
		files++
		text := string(data)
		cited += len(citation.FindAllString(commentBreak.ReplaceAllString(text, " "), -1))
		for _, why := range citedProblems(text, r, hs) {
			t.Errorf("%s cites %s", f, why)
		}
	}
	if files < 100 || cited < 50 {
		t.Fatalf("read %d Go files with %d citations: the test reads the wrong tree", files, cited)
	}
	t.Logf("%d citations in %d Go files", cited, files)
}
