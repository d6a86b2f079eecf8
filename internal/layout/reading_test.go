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
// POST /orders, in the default configuration, from the API's admission to
// the store's call, and the command that builds the model:
//
//   - services/<model>/main.go, which builds each generation of the model;
//   - the admission every request of every model passes through (admission
//     below): live.Model picks the generation that admits the request and
//     holds it until its release, through live/swap;
//   - the non-test Go files of the model's own packages, less the files of
//     other configurations (each named with the knob that selects it). A
//     file that every request passes through even with its feature off is
//     counted (pipeline/audit.go: each job hands its order or its slot
//     there).
//
// Before the admission (the API's routes, decoding and problems) and after
// the call (the store's SQL, pool and error classing), the path is the
// same for all three models and is read once: services/internal/api and
// services/internal/postgres are not counted, nor the leaves (order,
// dberr, overload), the seam (model), start-up (app, knob, telemetry,
// httpserver), and the packages the model tells (its metrics, audit). The
// command may import no other services package, so nothing leaves the
// count by moving to a new package unnoticed. Lines are all the lines
// (wc -l): the comments are part of the lesson.
//
// Budgets are what was measured when they were set plus about 10 % of
// lines (rounded up to 5) and one file, so that a comment never has to be
// cut to fit: unbounded 421 lines in 4 files (budget 465, 5), semaphore
// 734 in 7 (810, 8), pipeline 1042 in 9 (1150, 10). Outgrowing one is a
// reason to move machinery out of the path, or to raise it with the new
// measure and the same headroom. `go test -v -run TestReadingPaths
// ./internal/layout/` prints the counts.
var readingPaths = []struct {
	model  string
	budget int // lines
	files  int
	own    []string          // the model's packages, besides the command
	others map[string]string // files of other configurations: the knob that selects them
}{
	{model: "unbounded", budget: 465, files: 5, own: []string{"services/internal/direct"},
		others: map[string]string{"services/internal/direct/limited.go": "the semaphore's permit"}},
	{model: "semaphore", budget: 810, files: 8, own: []string{"services/internal/direct", "services/internal/limiter", "services/internal/gate"},
		others: map[string]string{
			"services/internal/limiter/adaptive.go":    "LIMIT=adaptive",
			"services/internal/limiter/poolwait.go":    "LIMIT=adaptive",
			"services/internal/limiter/newestfirst.go": "LIMIT_ORDER=lifo",
			"services/internal/gate/gate.go":           "LIMIT_ORDER=lifo, LIMIT=adaptive",
		}},
	{model: "pipeline", budget: 1150, files: 10, own: []string{"services/internal/pipeline"}},
}

// admission is the files of every model's path outside its own packages:
// what every request passes through between the API and the model.
var admission = []string{"services/internal/live/model.go", "services/internal/live/swap/swap.go"}

// shared are the services packages a command may import besides its
// model's own: none of them counted, but for the admission's files.
var shared = map[string]bool{
	"services/internal/api": true, "services/internal/app": true, "services/internal/live": true, "services/internal/live/swap": true, "services/internal/model": true,
	"services/internal/knob": true, "services/internal/postgres": true, "services/internal/order": true,
	"services/internal/dberr": true, "services/internal/overload": true, "services/internal/telemetry": true,
	"services/internal/audit": true, "services/internal/httpserver": true,
	"services/internal/limitermetrics": true, "services/internal/pipelinemetrics": true,
}

func TestReadingPaths(t *testing.T) {
	root := filepath.Join("..", "..")
	for _, p := range readingPaths {
		t.Run(p.model, func(t *testing.T) {
			cmd := "services/" + p.model
			own := map[string]bool{cmd: true}
			for _, pkg := range p.own {
				own[pkg] = true
			}
			deps := goList(t, root, "-deps", "-f", "{{.ImportPath}}", "./"+cmd)
			for _, dep := range deps {
				pkg, ok := strings.CutPrefix(dep, module)
				if ok && within(pkg, "services") && !own[pkg] && !shared[pkg] {
					t.Errorf("%s imports %s, neither its model's own (readingPaths) nor shared: say which it is", cmd, pkg)
				}
			}
			files := slices.Clone(admission)
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
			t.Logf("%s: %d lines in %d files (budget %d lines, %d files; %d lines of headroom): %s", p.model, lines, len(files),
				p.budget, p.files, p.budget-lines, strings.Join(files, " "))
			if lines > p.budget {
				t.Errorf("%s's reading path is %d lines, over its budget of %d: move machinery off the path, or set the budget again from the new measure with the same headroom (readingPaths)", p.model, lines, p.budget)
			}
			if len(files) > p.files {
				t.Errorf("%s's reading path is %d files, more than its %d", p.model, len(files), p.files)
			}
			for f := range p.others {
				if _, err := os.Stat(filepath.Join(root, f)); err != nil {
					t.Errorf("readingPaths names %s, which does not exist", f)
				}
			}
			for _, f := range admission {
				if pkg := filepath.Dir(f); !slices.Contains(deps, module+pkg) {
					t.Errorf("%s does not import %s: admission names a file off its path", cmd, pkg)
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
