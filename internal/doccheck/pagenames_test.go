package doccheck

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// goSpan is a code span of a page that is a Go name, a call's parentheses
// aside: `order.Input`, `Attack.Run()`, `Shutdown`.
var goSpan = regexp.MustCompile(`^\*?([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(?:\(.*\))?$`)

// spanProblems returns the stale names of a page's code span: a Go name
// of this repository (a package's name, a type's member, an identifier of
// the code), a Go file, an import path of this module.
func (idx *goIndex) spanProblems(span string) []staleName {
	var out []staleName
	if m := goSpan.FindStringSubmatch(span); m != nil {
		names := strings.Split(m[1], ".")
		first, rest := names[0], names[1:]
		switch {
		case len(names) == 1:
			if camelCase(first) && !idx.known(first) {
				out = append(out, staleName{first, unknownName})
			}
		case len(names) > 3 || fileExtensions[names[len(names)-1]] || idx.literals[m[1]]:
		case len(idx.byName[first]) > 0 && !idx.foreign[first]:
			if !slices.ContainsFunc(idx.byName[first], func(p *goPkg) bool { return idx.declares(p, rest) }) {
				p := idx.byName[first][0]
				out = append(out, staleName{m[1], "package " + p.name + " (" + p.dir + ") does not declare " + strings.Join(rest, ".")})
			}
		case idx.gone[first] != "" && !idx.foreign[first]:
			out = append(out, staleName{m[1], "package " + first + " (" + idx.gone[first] + ") is no longer in the repository"})
		case camelCase(first) && len(rest) == 1:
			if why := idx.typeMemberProblem(first, rest[0]); why != "" {
				out = append(out, staleName{m[1], why})
			}
		}
	}
	for _, w := range strings.Fields(span) {
		w = strings.TrimRight(w, ".,:;)")
		switch {
		case strings.HasPrefix(w, module+"/") || strings.Contains(w, "/") && strings.HasSuffix(w, ".go"):
			if why := idx.pathProblem(w, "."); why != "" {
				out = append(out, staleName{w, why})
			}
		case goFileForm.MatchString(w) && strings.HasSuffix(w, ".go"):
			if why := idx.goFileProblem(w); why != "" {
				out = append(out, staleName{w, why})
			}
		}
	}
	return out
}

// pageProblems returns the stale names of a Markdown page's code spans and
// its prose's words in mixed caps, by line (fenced blocks hold commands and
// quoted code, checked elsewhere).
func (idx *goIndex) pageProblems(text string) map[int][]staleName {
	text = fence.ReplaceAllStringFunc(text, func(b string) string {
		return strings.Repeat("\n", strings.Count(b, "\n"))
	})
	out := map[int][]staleName{}
	for i, line := range strings.Split(text, "\n") {
		var bad []staleName
		for _, m := range inlineCode.FindAllStringSubmatch(line, -1) {
			bad = append(bad, idx.spanProblems(m[1])...)
		}
		for _, w := range proseWords(inlineCode.ReplaceAllString(line, "")) {
			if hump(w) && !idx.known(w) {
				bad = append(bad, staleName{w, unknownName})
			}
		}
		if len(bad) > 0 {
			out[i+1] = bad
		}
	}
	return out
}

var inlineCode = regexp.MustCompile("`([^`\n]+)`")

// TestPagesNameWhatExists: every Go name a page shows as code (pkg.Name,
// Type.Member, an identifier, a Go file, an import path of this module)
// and every word of its prose in mixed caps is the repository's, as
// TestGoCommentsNameWhatExists holds the comments.
func TestPagesNameWhatExists(t *testing.T) {
	idx := index(t)
	var bad []string
	for _, page := range markdownFiles(t) {
		data, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Fatal(err)
		}
		for line, names := range idx.pageProblems(string(data)) {
			for _, n := range names {
				bad = append(bad, fmt.Sprintf("%s:%d: %s: %s", page, line, n.name, n.why))
			}
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
}
