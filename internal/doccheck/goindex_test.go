package doccheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode"
)

// module is the repository's module path, as import paths start.
const module = "github.com/orderlab/orderlab"

// goIndex is what the repository's Go code declares, read with go/parser
// (no type checking: one parse of every file, so that it stays fast).
type goIndex struct {
	files  []*goFile
	pkgs   map[string]*goPkg   // by directory, relative to root
	byName map[string][]*goPkg // by package name; main is no package a comment can name
	gone   map[string]string   // packages the history has and the tree no longer has: see gonePackages
	// foreign are the names under which the code imports packages of
	// other modules: a page's `trace.Span` is not this repository's.
	foreign map[string]bool
	// idents is every identifier the code declares or uses, its own and
	// those it uses of other packages (`Shutdown`, `ResponseWriter`).
	idents map[string]bool
	// literals are the code's short string constants: a span's or a
	// metric's name (limiter.wait) is a name of the code too.
	literals map[string]bool
	// words are the words of the code's strings and of the YAML files:
	// a JSON field (schemaVersion), a Kubernetes kind (PodMonitor).
	words map[string]bool
	// targets are the Makefile's targets.
	targets map[string]bool
	// tracked is every file of the repository, by path; dirs every
	// directory that holds one; dirNames and bases their last parts.
	tracked, dirs, dirNames, bases map[string]bool
}

// goPkg is one directory's package, its _test package folded in.
type goPkg struct {
	dir, name string
	decls     map[string]bool // top-level names
	types     map[string]*goType
}

// goType is a declared type's fields and methods, and the types it embeds
// (or aliases) whose members it has too.
type goType struct {
	members map[string]bool
	embeds  []typeRef
	opaque  bool // it embeds a type of another module: any member may be promoted
}

type typeRef struct{ dir, name string }

// goFile is a parsed Go file with the import names it declares.
type goFile struct {
	path    string
	fset    *token.FileSet
	ast     *ast.File
	pkg     *goPkg
	imports map[string]string // name in the file -> import path
	locals  map[string]bool   // see localNames
}

// makeTarget is a rule's target in a Makefile.
var makeTarget = regexp.MustCompile(`(?m)^([a-z][a-z0-9-]*):`)

var repoIndex = sync.OnceValues(func() (*goIndex, error) {
	cmd := exec.Command("git", "ls-files", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return nil, err
	}
	files := strings.Split(strings.TrimSpace(string(out)), "\n")
	idx := newIndex(files, func(f string) ([]byte, error) { return os.ReadFile(filepath.Join(root, f)) })
	idx.gone, err = gonePackages(idx)
	return idx, err
})

// index returns the repository's index, built once for all tests.
func index(t *testing.T) *goIndex {
	t.Helper()
	idx, err := repoIndex()
	if err != nil {
		t.Fatal(err)
	}
	return idx
}

// newIndex indexes a tree: its files, relative to its root, and how to
// read one.
func newIndex(files []string, read func(string) ([]byte, error)) *goIndex {
	idx := &goIndex{
		pkgs: map[string]*goPkg{}, byName: map[string][]*goPkg{}, gone: map[string]string{}, foreign: map[string]bool{},
		idents: map[string]bool{}, literals: map[string]bool{}, tracked: map[string]bool{}, dirs: map[string]bool{},
		dirNames: map[string]bool{}, bases: map[string]bool{}, words: map[string]bool{}, targets: map[string]bool{},
	}
	fset := token.NewFileSet()
	for _, f := range files {
		idx.tracked[f] = true
		idx.bases[path.Base(f)] = true
		for d := path.Dir(f); d != "."; d = path.Dir(d) {
			idx.dirs[d] = true
			idx.dirNames[path.Base(d)] = true
		}
		yaml := strings.HasSuffix(f, ".yaml") || strings.HasSuffix(f, ".yml")
		if !yaml && f != "Makefile" && !strings.HasSuffix(f, ".go") || strings.Contains(f, "testdata/") {
			continue
		}
		src, err := read(f)
		if err != nil {
			continue // deleted, not yet committed
		}
		if f == "Makefile" {
			for _, m := range makeTarget.FindAllSubmatch(src, -1) {
				idx.targets[string(m[1])] = true
			}
			continue
		}
		if yaml {
			addWords(idx.words, string(src))
			continue
		}
		file, err := parser.ParseFile(fset, f, src, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			continue // a file being written; the compiler reports it
		}
		dir := path.Dir(f)
		p := idx.pkgs[dir]
		if p == nil {
			p = &goPkg{dir: dir, decls: map[string]bool{}, types: map[string]*goType{}}
			idx.pkgs[dir] = p
		}
		if name := file.Name.Name; !strings.HasSuffix(name, "_test") || p.name == "" {
			p.name = strings.TrimSuffix(name, "_test")
		}
		idx.files = append(idx.files, &goFile{path: f, fset: fset, ast: file, pkg: p, imports: importNames(file)})
	}
	for _, f := range idx.files {
		idx.declare(f)
	}
	for _, p := range idx.pkgs {
		if p.name != "main" {
			idx.byName[p.name] = append(idx.byName[p.name], p)
		}
	}
	for _, f := range idx.files {
		for name, imp := range f.imports {
			if imp != module && !strings.HasPrefix(imp, module+"/") {
				idx.foreign[name] = true
			}
		}
	}
	return idx
}

// importNames maps each name a file's imports take to the import path:
// the explicit name, or the last element of the path (a /vN suffix and a
// gopkg.in .vN dropped).
func importNames(f *ast.File) map[string]string {
	out := map[string]string{}
	for _, s := range f.Imports {
		p, _ := strconv.Unquote(s.Path.Value)
		name := path.Base(p)
		if len(name) > 1 && name[0] == 'v' && strings.Trim(name[1:], "0123456789") == "" {
			name = path.Base(path.Dir(p))
		}
		name, _, _ = strings.Cut(name, ".")
		name = strings.ReplaceAll(name, "-", "")
		if s.Name != nil {
			name = s.Name.Name
		}
		if name != "_" && name != "." {
			out[name] = p
		}
	}
	return out
}

// declare adds a file's top-level names, its types' members and every
// identifier it mentions.
func (idx *goIndex) declare(f *goFile) {
	p := f.pkg
	typ := func(name string) *goType {
		if p.types[name] == nil {
			p.types[name] = &goType{members: map[string]bool{}}
		}
		return p.types[name]
	}
	ast.Inspect(f.ast, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Ident:
			idx.idents[n.Name] = true
		case *ast.BasicLit:
			if v, err := strconv.Unquote(n.Value); err == nil && n.Kind == token.STRING {
				if len(v) < 100 {
					idx.literals[v] = true
				}
				addWords(idx.words, v)
			}
		case *ast.File:
			for _, d := range n.Decls {
				idx.declareTop(f, d, typ)
			}
		}
		return true
	})
}

func (idx *goIndex) declareTop(f *goFile, d ast.Decl, typ func(string) *goType) {
	p := f.pkg
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv == nil {
			p.decls[d.Name.Name] = true
			return
		}
		if r := idx.resolve(f, d.Recv.List[0].Type); r.name != "" {
			typ(r.name).members[d.Name.Name] = true
		}
	case *ast.GenDecl:
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.ValueSpec:
				for _, n := range s.Names {
					p.decls[n.Name] = true
				}
			case *ast.TypeSpec:
				p.decls[s.Name.Name] = true
				t := typ(s.Name.Name)
				idx.members(f, t, s.Type)
				switch s.Type.(type) {
				case *ast.Ident, *ast.SelectorExpr, *ast.StarExpr, *ast.IndexExpr, *ast.IndexListExpr:
					idx.embed(f, t, s.Type) // an alias, or a type defined as another: its fields
				}
			}
		}
	}
}

// members adds the fields and methods a type literal declares, and what it
// embeds.
func (idx *goIndex) members(f *goFile, t *goType, e ast.Expr) {
	var fields *ast.FieldList
	switch e := e.(type) {
	case *ast.StructType:
		fields = e.Fields
	case *ast.InterfaceType:
		fields = e.Methods
	default:
		return
	}
	for _, fl := range fields.List {
		for _, n := range fl.Names {
			t.members[n.Name] = true
		}
		if len(fl.Names) == 0 {
			idx.embed(f, t, fl.Type)
		}
	}
}

// embed records that t has the members of e too.
func (idx *goIndex) embed(f *goFile, t *goType, e ast.Expr) {
	r := idx.resolve(f, e)
	switch {
	case r.name == "":
		t.opaque = true
	case r.dir == "":
		t.opaque = true // a type of another module
	default:
		t.embeds = append(t.embeds, r)
		t.members[r.name] = true // an embedded field is named by its type
	}
}

// resolve names the type an expression denotes: its directory (the file's
// own, or a repository package it imports; "" for another module's) and
// its name; a zero typeRef for a type literal.
func (idx *goIndex) resolve(f *goFile, e ast.Expr) typeRef {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		case *ast.Ident:
			return typeRef{dir: f.pkg.dir, name: x.Name}
		case *ast.SelectorExpr:
			pkg, ok := x.X.(*ast.Ident)
			if !ok {
				return typeRef{}
			}
			if imp, ok := strings.CutPrefix(f.imports[pkg.Name], module+"/"); ok {
				return typeRef{dir: imp, name: x.Sel.Name}
			}
			return typeRef{name: x.Sel.Name}
		default:
			return typeRef{}
		}
	}
}

// hasMember says whether the type dir.name has member m, declared or
// promoted from what it embeds; a type that embeds another module's type
// has every member (the index does not read other modules).
func (idx *goIndex) hasMember(dir, name, m string, depth int) bool {
	p := idx.pkgs[dir]
	if p == nil || depth > 5 {
		return false
	}
	t := p.types[name]
	if t == nil {
		return false
	}
	if t.members[m] || t.opaque {
		return true
	}
	for _, e := range t.embeds {
		if idx.hasMember(e.dir, e.name, m, depth+1) {
			return true
		}
	}
	return false
}

// declares says whether package p declares names: a top-level name, or a
// type and one of its members.
func (idx *goIndex) declares(p *goPkg, names []string) bool {
	if !p.decls[names[0]] {
		return false
	}
	if len(names) == 1 {
		return true
	}
	return idx.hasMember(p.dir, names[0], names[1], 0)
}

// addWords adds the words of text (letters, digits and underscores) to set.
func addWords(set map[string]bool, text string) {
	for _, w := range strings.FieldsFunc(text, func(r rune) bool {
		return r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		set[w] = true
	}
}
