package layout_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/orderlab/orderlab/"

// serviceRank orders the services' packages: a package imports only
// packages of a lower rank. The concurrency model is the only thing that
// differs: the commands choose one (direct or pipeline, both under the
// seam, model), so nothing below them may know them.
var serviceRank = map[string]int{
	"services/internal/order":           0,
	"services/internal/dberr":           0,
	"services/internal/overload":        0,
	"services/internal/telemetry":       0,
	"services/internal/knob":            0,
	"services/internal/knob/labtable":   1,
	"services/internal/gate":            0,
	"services/internal/live/swap":       0,
	"services/internal/model":           1,
	"services/internal/audit":           1,
	"services/internal/postgres":        1,
	"services/internal/limiter":         2,
	"services/internal/httpserver":      1,
	"services/internal/direct":          2,
	"services/internal/api":             2,
	"services/internal/pipeline":        2,
	"services/internal/live":            3,
	"services/internal/app":             4,
	"services/internal/limitermetrics":  3,
	"services/internal/pipelinemetrics": 3,
	"services/internal/apptest":         5,
	"services/unbounded":                6,
	"services/semaphore":                6,
	"services/pipeline":                 6,
}

// imports lists every package of the module with the module's packages it
// imports (tests excluded: a test may reach for shared test infrastructure).
func imports(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	graph := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module)
		graph[pkg] = nil
		for _, imp := range fields[1:] {
			if strings.HasPrefix(imp, module) {
				graph[pkg] = append(graph[pkg], strings.TrimPrefix(imp, module))
			}
		}
	}
	return graph
}

func within(pkg, root string) bool { return pkg == root || strings.HasPrefix(pkg, root+"/") }

func TestImportsRunOneWay(t *testing.T) {
	graph := imports(t)
	for _, want := range []string{"services/internal/api", "loadtest/attack", "lab/scenario", "internal/pgdb"} {
		if _, ok := graph[want]; !ok {
			t.Fatalf("go list did not list %s: the test reads the wrong tree", want)
		}
	}
	for pkg, deps := range graph {
		for _, dep := range deps {
			switch {
			case within(pkg, "services"):
				rank, ranked := serviceRank[pkg]
				if !ranked {
					t.Errorf("%s is not placed in the services' layers (serviceRank): place it", pkg)
					continue
				}
				if within(dep, "services") {
					if depRank, ok := serviceRank[dep]; !ok || depRank >= rank {
						t.Errorf("%s imports %s: the services' imports run from the commands down to order, dberr, overload and telemetry", pkg, dep)
					}
				} else if !within(dep, "internal") {
					t.Errorf("%s imports %s: the services import only services/internal and internal", pkg, dep)
				}
			case within(pkg, "internal"):
				if !within(dep, "internal") {
					t.Errorf("%s imports %s: internal/ is shared infrastructure and imports nothing outside it", pkg, dep)
				}
			case within(pkg, "loadtest"):
				if within(dep, "services") || within(dep, "grafana") || within(dep, "deploy") {
					t.Errorf("%s imports %s: the load generator knows the services only through HTTP and /metrics", pkg, dep)
				}
				if within(dep, "lab") {
					t.Errorf("%s imports %s: the load generator stands alone; the lab uses it, never the reverse", pkg, dep)
				}
			case within(pkg, "lab"):
				if !within(dep, "lab") && !within(dep, "loadtest") && !within(dep, "internal") {
					t.Errorf("%s imports %s: the lab imports only itself, the load generator and internal/ (the services through HTTP and their knob API)", pkg, dep)
				}
			case within(pkg, "grafana"):
				if !within(dep, "grafana") && dep != "loadtest/annotate" {
					t.Errorf("%s imports %s: the board imports only itself and the annotation tag it filters on", pkg, dep)
				}
			case within(pkg, "deploy"):
				if !within(dep, "deploy") {
					t.Errorf("%s imports %s: the manifests' generator imports only deploy/", pkg, dep)
				}
			}
		}
	}
}

// The load generator's command builds without any package of the lab or of
// the services: it is usable on its own against any HTTP service.
func TestTheGeneratorBuildsAlone(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "./loadtest")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./loadtest: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 || !strings.Contains(string(out), module+"loadtest/attack") {
		t.Fatalf("go list -deps ./loadtest listed %d packages, not loadtest/attack among them: the test reads the wrong tree", len(deps))
	}
	for _, d := range deps {
		if p := strings.TrimPrefix(d, module); p != d && (within(p, "lab") || within(p, "services") || within(p, "grafana")) {
			t.Errorf("loadtest's command depends on %s", p)
		}
	}
}
