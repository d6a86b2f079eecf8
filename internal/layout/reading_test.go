package layout_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The reading path of a model is what a reader opens to follow one
// POST /orders from services/<model>/main.go to the commit, in the default
// configuration: the command's main.go and the non-test Go files of the
// model's own packages, less the files of other configurations (each named
// with the knob that selects it). The packages every service shares, read
// once for all three (the API, the app, the seam, the store) and the ones
// around a model (its metrics), are not counted; the command may import no
// other services package, so nothing leaves the count by moving to a new
// package unnoticed. Lines are all the lines (wc -l): the comments are part
// of the lesson. `go test -v -run TestReadingPaths ./internal/layout/`
// prints the counts.
var readingPaths = []struct {
	model  string
	budget int
	own    []string          // the model's packages, besides the command
	others map[string]string // files of other configurations: the knob that selects them
}{
	{model: "unbounded", budget: 135, own: []string{"services/internal/direct"},
		others: map[string]string{"services/internal/direct/limited.go": "the semaphore's permit"}},
	{model: "semaphore", budget: 450, own: []string{"services/internal/direct", "services/internal/limiter", "services/internal/gate"},
		others: map[string]string{
			"services/internal/limiter/adaptive.go":    "LIMIT=adaptive",
			"services/internal/limiter/poolwait.go":    "LIMIT=adaptive",
			"services/internal/limiter/newestfirst.go": "LIMIT_ORDER=lifo",
			"services/internal/gate/gate.go":           "LIMIT_ORDER=lifo, LIMIT=adaptive",
		}},
	{model: "pipeline", budget: 700, own: []string{"services/internal/pipeline"},
		others: map[string]string{"services/internal/pipeline/audit.go": "AUDIT_DELAY"}},
}

// shared are the services packages a command may import besides its
// model's own, none of them counted.
var shared = map[string]bool{
	"services/internal/api": true, "services/internal/app": true, "services/internal/live": true, "services/internal/live/swap": true, "services/internal/model": true,
	"services/internal/knob": true, "services/internal/postgres": true, "services/internal/order": true,
	"services/internal/dberr": true, "services/internal/overload": true, "services/internal/telemetry": true,
	"services/internal/audit": true, "services/internal/httpserver": true,
	"services/internal/limitermetrics": true, "services/internal/pipelinemetrics": true,
}

// maxReadingFiles is how many files a reading path may have.
const maxReadingFiles = 6

func TestReadingPaths(t *testing.T) {
	root := filepath.Join("..", "..")
	for _, p := range readingPaths {
		t.Run(p.model, func(t *testing.T) {
			cmd := "services/" + p.model
			own := map[string]bool{cmd: true}
			for _, pkg := range p.own {
				own[pkg] = true
			}
			for _, dep := range goList(t, root, "-deps", "-f", "{{.ImportPath}}", "./"+cmd) {
				pkg, ok := strings.CutPrefix(dep, module)
				if ok && within(pkg, "services") && !own[pkg] && !shared[pkg] {
					t.Errorf("%s imports %s, neither its model's own (readingPaths) nor shared: say which it is", cmd, pkg)
				}
			}
			var files []string
			for pkg := range own {
				for _, f := range goList(t, root, "-f", `{{join .GoFiles " "}}`, "./"+pkg) {
					if _, other := p.others[pkg+"/"+f]; !other {
						files = append(files, pkg+"/"+f)
					}
				}
			}
			slices.Sort(files)
			lines := 0
			for _, f := range files {
				data, err := os.ReadFile(filepath.Join(root, f))
				if err != nil {
					t.Fatal(err)
				}
				lines += strings.Count(string(data), "\n")
			}
			t.Logf("%s: %d lines in %d files (budget %d lines, %d files): %s", p.model, lines, len(files),
				p.budget, maxReadingFiles, strings.Join(files, " "))
			if lines > p.budget {
				t.Errorf("%s's reading path is %d lines, over its budget of %d: move machinery out of the model's packages, or remove what is no longer needed", p.model, lines, p.budget)
			}
			if len(files) > maxReadingFiles {
				t.Errorf("%s's reading path is %d files, more than %d", p.model, len(files), maxReadingFiles)
			}
			for f := range p.others {
				if _, err := os.Stat(filepath.Join(root, f)); err != nil {
					t.Errorf("readingPaths names %s, which does not exist", f)
				}
			}
		})
	}
}

// goList runs go list with args in dir and returns its words.
func goList(t *testing.T, dir string, args ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v", strings.Join(args, " "), err)
	}
	return strings.Fields(string(out))
}
