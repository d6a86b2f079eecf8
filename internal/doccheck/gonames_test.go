package doccheck

import (
	"fmt"
	"go/ast"
	"path"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode"
)

// The forms of text that claim to name this repository's code, and words
// written as only Go names are (see hump). Nothing else is checked: a word
// of prose that happens to be a name too is not a claim.
var (
	// pathForm is a slash-separated path: services/internal/knob,
	// pipeline/admission.go, github.com/orderlab/orderlab/loadtest/attack.
	pathForm = regexp.MustCompile("(?:^|[\\s(\"'`\\[])((?:\\./)?[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)+)")
	// goFileForm is a Go file's name on its own: admission.go.
	goFileForm = regexp.MustCompile("(?:^|[\\s(\"'`\\[])([A-Za-z0-9_]+\\.go)\\b")
	// chainForm is a dotted name: order.Input, attack.Result.Merge,
	// Store.sweep. Not after a slash (net/http.Server is another module's)
	// or a dot (a host name, a metric).
	chainForm = regexp.MustCompile(`(?:^|[^\w./\-])(\*?[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)`)
	// docLink is a Go doc comment link: [attack.Transport], [attack.Result.Merge],
	// or a name of the comment's own package.
	docLink = regexp.MustCompile(`(?:^|[^\w\]])\[\*?([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\]`)
	// makeCommand is a make command in backquotes: `make lab-test`.
	makeCommand = regexp.MustCompile("`make ([a-z][a-z0-9-]*)")
	// backticked is one identifier in backquotes: `Shutdown`, `Admit()`.
	backticked = regexp.MustCompile("`\\*?([A-Za-z_]\\w*)(?:\\(\\))?`")
)

// fileExtensions end a dotted word that is a file's name, not a Go name
// (report.json, knobs.md); a .go file is checked as a file.
var fileExtensions = map[string]bool{
	"go": true, "md": true, "json": true, "html": true, "yaml": true, "yml": true, "txt": true,
	"csv": true, "sql": true, "js": true, "png": true, "svg": true, "mod": true, "sum": true, "sh": true,
	"ini": true, "conf": true, "toml": true, "env": true, "log": true, "xml": true, "pem": true,
}

// notRepoPaths are paths in the form of this repository's that name
// something else: container images and other modules.
var notRepoPaths = map[string]bool{
	"grafana/grafana":   true, // Grafana's image
	"prometheus/common": true, // the Prometheus module (expfmt)
}

// placeholder is a path with a part that stands for any name.
var placeholder = regexp.MustCompile(`(?:^|/)[A-Z]+(?:\.\w+)?(?:/|$)`)

// builtins are the names a doc link may give without declaring them.
var builtins = map[string]bool{"error": true, "any": true, "comparable": true}

// camelCase says whether a word is written as a Go name is, not as a
// constant of the shell or a placeholder: an upper-case first letter and
// a lower-case letter after it.
func camelCase(w string) bool {
	return w != "" && unicode.IsUpper(rune(w[0])) && strings.IndexFunc(w, unicode.IsLower) > 0
}

// staleName is a name that names nothing, and why.
type staleName struct{ name, why string }

// pathProblem says what is wrong with a path a text in dir names; "" when
// it exists or is not a claim about this repository. A path starting with
// one of the repository's top-level directories is looked up from the
// root and from each directory above dir (a comment under services/ may
// name its internal packages from there); another Go file's path from any
// directory that has the name of its first part.
func (idx *goIndex) pathProblem(p, dir string) string {
	p = strings.TrimPrefix(strings.TrimRight(p, ".,:;)/"), "./")
	if rest, ok := strings.CutPrefix(p, module+"/"); ok {
		if !idx.tracked[rest] && !idx.dirs[rest] {
			return "no such package or file in the repository"
		}
		return ""
	}
	first, _, _ := strings.Cut(p, "/")
	switch {
	case notRepoPaths[p] || strings.Contains(first, ".") && !strings.HasPrefix(first, "."):
		return "" // another host's path
	case placeholder.MatchString(p):
		return "" // prometheus/rules/NAME.yml
	case idx.dirs[first]: // a top-level directory
		for d := dir; ; d = path.Dir(d) {
			if q := path.Join(d, p); idx.tracked[q] || idx.dirs[q] {
				return ""
			}
			if d == "." {
				return "no such file or directory"
			}
		}
	case strings.HasSuffix(p, ".go") && idx.dirNames[first]:
		for f := range idx.tracked {
			if strings.HasSuffix(f, "/"+p) || f == p {
				return ""
			}
		}
		return "no such Go file"
	}
	return ""
}

// goFileProblem says whether some directory holds a Go file named name.
func (idx *goIndex) goFileProblem(name string) string {
	if idx.bases[name] {
		return ""
	}
	return "no such Go file"
}

// chainProblem says what is wrong with a dotted name a comment of file f
// gives; "" when it resolves or is not a claim about this repository.
func (idx *goIndex) chainProblem(f *goFile, chain string) string {
	names := strings.Split(chain, ".")
	if len(names) > 3 || fileExtensions[names[len(names)-1]] || idx.literals[chain] {
		return "" // a file, or a name the code writes as a string (a span's)
	}
	first, rest := names[0], names[1:]
	own := f.pkg
	if imp, ok := f.imports[first]; ok {
		rel, repo := strings.CutPrefix(imp, module+"/")
		if !repo || idx.pkgs[rel] == nil || idx.declares(idx.pkgs[rel], rest) {
			return ""
		}
		return "package " + first + " (" + rel + ") does not declare " + strings.Join(rest, ".")
	}
	if first == own.name && own.name != "main" {
		if idx.declares(own, rest) {
			return ""
		}
		return "package " + first + " does not declare " + strings.Join(rest, ".")
	}
	if ps := idx.byName[first]; len(ps) > 0 {
		return idx.namedPackageProblem(f, ps, rest)
	}
	if dir, ok := idx.gone[first]; ok && !localNames(f)[first] {
		return "package " + first + " (" + dir + ") is no longer in the repository"
	}
	if own.types[first] != nil && own.decls[first] && len(rest) == 1 {
		if idx.hasMember(own.dir, first, rest[0], 0) {
			return ""
		}
		return "type " + first + " has no field or method " + rest[0]
	}
	if camelCase(first) && len(rest) == 1 && !localNames(f)[first] {
		return idx.typeMemberProblem(first, rest[0])
	}
	return ""
}

// typeMemberProblem checks Type.Member where Type is another package's:
// when some repository package declares a type of that name, one of them
// has the member. A name no package of the repository declares as a type
// is another module's (ConnConfig.Tracer).
func (idx *goIndex) typeMemberProblem(typ, m string) string {
	var in []string
	for _, p := range idx.pkgs {
		if p.types[typ] != nil && p.decls[typ] {
			if idx.hasMember(p.dir, typ, m, 0) {
				return ""
			}
			in = append(in, p.name)
		}
	}
	if len(in) == 0 {
		return ""
	}
	sort.Strings(in)
	return "no type " + typ + " of the repository (" + strings.Join(in, ", ") + ") has a field or method " + m
}

// namedPackageProblem checks rest against a repository package that the
// file does not import. When the file also calls something of its own by
// the package's name (a variable report beside package report), the name
// may be that thing's field or method.
func (idx *goIndex) namedPackageProblem(f *goFile, ps []*goPkg, rest []string) string {
	for _, p := range ps {
		if idx.declares(p, rest) {
			return ""
		}
	}
	if localNames(f)[ps[0].name] && idx.anyMember(rest[0]) {
		return ""
	}
	return "package " + ps[0].name + " (" + ps[0].dir + ") does not declare " + strings.Join(rest, ".")
}

// anyMember says whether some repository type has a field or method m.
func (idx *goIndex) anyMember(m string) bool {
	for _, p := range idx.pkgs {
		for _, t := range p.types {
			if t.members[m] {
				return true
			}
		}
	}
	return false
}

// localNames are the identifiers a file uses, its imports' names aside.
func localNames(f *goFile) map[string]bool {
	if f.locals != nil {
		return f.locals
	}
	out := map[string]bool{}
	ast.Inspect(f.ast, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok && f.imports[x.Name] != "" {
				return false
			}
		case *ast.Ident:
			out[n.Name] = true
		}
		return true
	})
	delete(out, f.ast.Name.Name)
	f.locals = out
	return out
}

// docLinkProblem checks a doc link the Go way: a name, or a type and its
// member, of the file's own package; or a name of another package.
func (idx *goIndex) docLinkProblem(f *goFile, link string) string {
	names := strings.Split(link, ".")
	switch {
	case !unicode.IsUpper(rune(names[0][0])):
		return idx.chainProblem(f, link) // [pkg.Name]; [i] is an index
	case !camelCase(names[0]):
		return "" // a placeholder: [NAME]
	}
	if len(names) == 1 && builtins[names[0]] || idx.declares(f.pkg, names) {
		return ""
	}
	return "package " + f.pkg.name + " does not declare " + link
}

// commentProblems returns the stale names of a Go file's comments, by line.
func (idx *goIndex) commentProblems(f *goFile) map[int][]staleName {
	out := map[int][]staleName{}
	for _, g := range f.ast.Comments {
		for _, c := range g.List {
			start := f.fset.Position(c.Slash).Line
			for i, line := range strings.Split(c.Text, "\n") {
				seen := map[string]bool{}
				idx.lineProblems(f, line, func(name, why string) {
					if why != "" && !seen[name] {
						seen[name] = true
						out[start+i] = append(out[start+i], staleName{name, why})
					}
				})
			}
		}
	}
	return out
}

// lineProblems gives add each name of one line of a comment of f, and what
// is wrong with it ("" for nothing). Each form is looked for only in a
// line with its mark: the regular expressions are most of the test's time.
func (idx *goIndex) lineProblems(f *goFile, line string, add func(name, why string)) {
	has := func(mark string) bool { return strings.Contains(line, mark) }
	// A doc comment's code block shows commands, whose paths are their
	// arguments, not the repository's files.
	codeBlock := strings.HasPrefix(line, "//\t") || strings.HasPrefix(line, "//   ")
	if has("/") && !codeBlock {
		for _, m := range pathForm.FindAllStringSubmatch(line, -1) {
			add(m[1], idx.pathProblem(m[1], path.Dir(f.path)))
		}
	}
	if has(".go") {
		for _, m := range goFileForm.FindAllStringSubmatch(line, -1) {
			add(m[1], idx.goFileProblem(m[1]))
		}
	}
	if has(".") {
		for _, m := range chainForm.FindAllStringSubmatch(line, -1) {
			add(m[1], idx.chainProblem(f, strings.TrimPrefix(m[1], "*")))
		}
	}
	if has("[") {
		for _, m := range docLink.FindAllStringSubmatch(line, -1) {
			add(m[1], idx.docLinkProblem(f, m[1]))
		}
	}
	if has("`") {
		for _, m := range backticked.FindAllStringSubmatch(line, -1) {
			if camelCase(m[1]) && !idx.known(m[1]) {
				add(m[1], unknownName)
			}
		}
		for _, m := range makeCommand.FindAllStringSubmatch(line, -1) {
			if !idx.targets[m[1]] {
				add("make "+m[1], "the Makefile has no such target")
			}
		}
	}
	for _, w := range proseWords(line) {
		if hump(w) && !idx.known(w) {
			add(w, unknownName)
		}
	}
}

// TestGoCommentsNameWhatExists: every name of this repository's code a Go
// comment gives (a file or package path, pkg.Name, Type.Member, a doc
// link, a backquoted identifier, a word in mixed caps) is declared, so
// that a reader who looks for it finds it; and every make command in
// backquotes names a target of the Makefile.
func TestGoCommentsNameWhatExists(t *testing.T) {
	idx := index(t)
	var bad []string
	for _, f := range idx.files {
		for line, names := range idx.commentProblems(f) {
			for _, n := range names {
				bad = append(bad, fmt.Sprintf("%s:%d: %s: %s", f.path, line, n.name, n.why))
			}
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
	if len(idx.files) < 300 {
		t.Fatalf("parsed %d Go files: the test reads the wrong tree", len(idx.files))
	}
}
