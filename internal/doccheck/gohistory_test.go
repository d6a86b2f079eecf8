package doccheck

import (
	"go/parser"
	"go/token"
	"os/exec"
	"path"
	"strings"
)

// git runs git in the repository and returns its output.
func git(args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = root
	out, err := cmd.Output()
	return string(out), err
}

// gonePackages names the packages that the history has and the tree no
// longer has (renamed or removed), each with the directory it was in: a
// comment that still gives gone.Name names nothing. A package's name is
// its package clause in the last commit that had it; main is left out, and
// so is a name a package of the tree has again. A shallow clone knows the
// packages of its one commit only, and finds none gone.
func gonePackages(idx *goIndex) (map[string]string, error) {
	log, err := git("log", "--name-only", "--format=", "--", "*.go")
	if err != nil {
		return nil, err
	}
	gone, seen := map[string]string{}, map[string]bool{}
	for _, f := range strings.Fields(log) {
		dir := path.Dir(f)
		if seen[dir] || idx.pkgs[dir] != nil || strings.HasSuffix(f, "_test.go") || strings.Contains(f, "testdata/") {
			continue
		}
		seen[dir] = true
		last, err := git("log", "-1", "--format=%H", "--", f)
		if err != nil {
			return nil, err
		}
		src, err := git("show", strings.TrimSpace(last)+"^:"+f)
		if err != nil {
			continue // f came and went in one commit, or under another name
		}
		file, err := parser.ParseFile(token.NewFileSet(), f, src, parser.PackageClauseOnly)
		if err != nil || file.Name.Name == "main" || len(idx.byName[file.Name.Name]) > 0 {
			continue
		}
		gone[file.Name.Name] = dir
	}
	return gone, nil
}
