package doccheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

const root = "../.."

// repoURL is how code and alerts link a page so that a user can follow the
// link from Prometheus, Grafana or a problem answer.
const repoURL = "https://github.com/orderlab/orderlab/blob/main/"

// markdownFiles lists every tracked Markdown file, relative to root.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	cmd := exec.Command("git", "ls-files", "--cached", "--others", "--exclude-standard", "*.md")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	var files []string
	for _, f := range strings.Fields(string(out)) {
		if _, err := os.Stat(filepath.Join(root, f)); err == nil && !strings.Contains(f, "testdata/") {
			files = append(files, f)
		}
	}
	if len(files) < 10 {
		t.Fatalf("found only %d Markdown files: the test reads the wrong tree", len(files))
	}
	return files
}

var (
	fence     = regexp.MustCompile("(?ms)^```.*?^```[ \t]*$")
	heading   = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *#*$`)
	explicit  = regexp.MustCompile(`<a id="([^"]+)"></a>`)
	mdLink    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	linkChars = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// slug is GitHub's anchor for a heading: lower case, punctuation dropped
// (hyphens and underscores kept), spaces turned into hyphens.
func slug(h string) string {
	h = linkChars.ReplaceAllString(h, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors returns every anchor of a Markdown page: its headings' slugs
// (with GitHub's -1, -2 for repeats) and its explicit <a id> anchors.
func anchors(text string) map[string]bool {
	text = fence.ReplaceAllString(text, "")
	seen := map[string]int{}
	out := map[string]bool{}
	for _, m := range heading.FindAllStringSubmatch(text, -1) {
		s := slug(m[1])
		if n := seen[s]; n > 0 {
			out[s+"-"+strconv.Itoa(n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	for _, m := range explicit.FindAllStringSubmatch(text, -1) {
		out[m[1]] = true
	}
	return out
}

// resolver checks a link target (path#anchor, relative to a page) and
// caches each page's anchors.
type resolver struct {
	t     *testing.T
	pages map[string]map[string]bool
}

func (r *resolver) anchorsOf(path string) (map[string]bool, bool) {
	if a, ok := r.pages[path]; ok {
		return a, true
	}
	data, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		return nil, false
	}
	a := anchors(string(data))
	r.pages[path] = a
	return a, true
}

// check says what is wrong with target, a path relative to the repository
// root with an optional #anchor; "" when it resolves.
func (r *resolver) check(target string) string {
	path, frag, _ := strings.Cut(target, "#")
	path = filepath.Clean(path)
	if strings.HasPrefix(path, "..") {
		return "points outside the repository"
	}
	info, err := os.Stat(filepath.Join(root, path))
	if err != nil {
		return "no such file"
	}
	if frag == "" {
		return ""
	}
	if info.IsDir() || !strings.HasSuffix(path, ".md") {
		return "an anchor into something that is not a Markdown page"
	}
	a, _ := r.anchorsOf(path)
	if !a[frag] {
		return "no anchor #" + frag + " in " + path
	}
	return ""
}

// TestMarkdownLinksResolve: every relative link of every Markdown file, and
// every link into this repository by its GitHub URL, names a file that
// exists and, with an anchor, a heading or <a id> of that page.
func TestMarkdownLinksResolve(t *testing.T) {
	r := &resolver{t: t, pages: map[string]map[string]bool{}}
	links := 0
	for _, page := range markdownFiles(t) {
		data, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Fatal(err)
		}
		text := fence.ReplaceAllString(string(data), "")
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			var resolved string
			switch {
			case strings.HasPrefix(target, repoURL):
				resolved = strings.TrimPrefix(target, repoURL)
			case strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:"):
				continue
			case strings.HasPrefix(target, "#"):
				resolved = page + target
			default:
				resolved = filepath.Join(filepath.Dir(page), target)
			}
			links++
			if why := r.check(resolved); why != "" {
				t.Errorf("%s: link %s: %s", page, target, why)
			}
		}
	}
	if links < 200 {
		t.Fatalf("found only %d links: the parser is out of date", links)
	}
}

// TestRepositoryURLsResolve: the links code and rules give users (problem
// types, alert runbooks) are GitHub URLs of this repository; each names a
// page and an anchor that exist.
func TestRepositoryURLsResolve(t *testing.T) {
	r := &resolver{t: t, pages: map[string]map[string]bool{}}
	url := regexp.MustCompile(regexp.QuoteMeta(repoURL) + `([A-Za-z0-9_./-]+(?:#[a-z0-9-]*)?)`)
	cmd := exec.Command("git", "ls-files", "--cached", "--others", "--exclude-standard", "*.go", "*.yml", "*.yaml")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, f := range strings.Fields(string(out)) {
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			continue
		}
		for _, m := range url.FindAllStringSubmatch(string(data), -1) {
			target := m[1]
			if strings.HasSuffix(target, "#problem-") {
				// The problem types' base: each type is checked with its name.
				continue
			}
			found++
			if why := r.check(target); why != "" {
				t.Errorf("%s: %s%s: %s", f, repoURL, target, why)
			}
		}
	}
	if found < 6 {
		t.Fatalf("found only %d repository URLs (the alerts' runbooks alone are more)", found)
	}
}
