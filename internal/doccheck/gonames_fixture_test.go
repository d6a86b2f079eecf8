package doccheck

import (
	"testing"
)

// fixture is a small tree for the checker's own tests: a package queue
// and a package stage that imports it.
var fixture = map[string]string{
	"services/internal/queue/queue.go": `package queue

// Queue holds jobs; it has base's Size.
type Queue struct {
	jobs []int
	base
}

type base struct{ Size int }

// Push adds a job.
func (q *Queue) Push(j int) { q.jobs = append(q.jobs, j) }

// New returns an empty queue.
func New() *Queue { return &Queue{} }
`,
	"services/internal/stage/stage.go": `package stage

import (
	"net/http"

	"github.com/orderlab/orderlab/services/internal/queue"
)

// Stage runs a queue's jobs under a span "stage.run".
type Stage struct{ q *queue.Queue }

func newStage() Stage { return Stage{} }

// Run serves with http.Server.
func (s Stage) Run() { _, _ = "stage.run", http.Server{} }
`,
	"docs/stage.md": "# Stage\n",
	"Makefile":      "test: ## go test\n\tgo test ./...\n",
}

// fixtureIndex indexes fixture, with one more file of package stage.
func fixtureIndex(t *testing.T, src string) (*goIndex, *goFile) {
	t.Helper()
	files := []string{"services/internal/stage/more.go"}
	for f := range fixture {
		files = append(files, f)
	}
	idx := newIndex(files, func(f string) ([]byte, error) {
		if f == files[0] {
			return []byte(src), nil
		}
		return []byte(fixture[f]), nil
	})
	idx.gone["olds"] = "services/internal/olds" // as if the history had it
	for _, f := range idx.files {
		if f.path == files[0] {
			return idx, f
		}
	}
	t.Fatalf("the fixture did not parse: %q", src)
	return nil, nil
}

func TestCommentProblemsFindsStaleNames(t *testing.T) {
	good := []string{
		"queue.New, queue.Queue.Push and queue.Queue.Size (promoted) and [queue.Queue]",
		"[Stage], [Stage.Run], Stage.Run, stage.Stage, *queue.Queue; [NAME] and [i] are no links",
		"services/internal/queue, internal/queue from services/, queue/queue.go, queue.go, stage.go",
		"github.com/orderlab/orderlab/services/internal/queue and docs/stage.md",
		"the span stage.run, http.Server.Shutdown, net/http.ServeMux, report.json, e.g. this",
		"grafana/grafana is an image; prometheus/rules/NAME.yml stands for any rule file; t₀ and a.fooBar",
		"`Stage`, `Push()`, two newStages or one newStage (a plural), *queue.Queue, `make test`",
	}
	for _, c := range good {
		idx, f := fixtureIndex(t, "package stage\n\n// "+c+"\nvar x int\n")
		if got := idx.commentProblems(f); len(got) != 0 {
			t.Errorf("%q: %v, want no stale name", c, got)
		}
	}
	idx, f := fixtureIndex(t, "package stage\n\n// olds.Queue is the variable's\nvar olds struct{ Queue int }\n")
	if got := idx.commentProblems(f); len(got) != 0 {
		t.Errorf("a gone package's name that is a variable of the file: %v, want no stale name", got)
	}
	bad := map[string]string{
		"queue.Old":                 "an imported package's name it does not declare",
		"queue.Queue.Pop":           "a method the type does not have",
		"stage.Gone":                "a name the own package does not declare",
		"Stage.Stop":                "a member of an own type",
		"[Gone]":                    "a doc link to nothing",
		"[Stage.Stop]":              "a doc link to a member the type does not have",
		"services/internal/gone":    "a package path",
		"queue/gone.go":             "a Go file under a directory",
		"gone.go":                   "a Go file",
		"`Vanished`":                "a backquoted name",
		"runQueued is the old name": "a word in mixed caps",
		"`make tests` runs them":    "a make target",
		"olds.Queue":                "a name of a package that is gone",
		"github.com/orderlab/orderlab/services/internal/gone": "an import path",
	}
	for c, what := range bad {
		idx, f := fixtureIndex(t, "package stage\n\n// "+c+"\nvar x int\n")
		got := idx.commentProblems(f)
		if len(got) != 1 || len(got[3]) != 1 {
			t.Errorf("%s (%q): %v, want one stale name on line 3", what, c, got)
		}
	}
}

func TestSpanProblemsFindsStaleNames(t *testing.T) {
	idx, _ := fixtureIndex(t, "package stage\n")
	for _, s := range []string{"queue.New", "queue.Queue.Push()", "Stage.Run", "Stage", "Push", "queue/queue.go", "stage.go",
		"github.com/orderlab/orderlab/services/internal/queue", "http.Server.Shutdown", "Semaphore(25)", "stage.run"} {
		if got := idx.spanProblems(s); len(got) != 0 {
			t.Errorf("`%s`: %v, want none", s, got)
		}
	}
	for _, s := range []string{"queue.Old", "queue.Queue.Pop()", "Stage.Stop", "Vanished", "queue/gone.go", "gone.go",
		"github.com/orderlab/orderlab/services/internal/gone", "olds.Queue"} {
		if got := idx.spanProblems(s); len(got) != 1 {
			t.Errorf("`%s`: %v, want one stale name", s, got)
		}
	}
	page := "# P\n\n```\nqueue.Old in a block\n```\n`queue.Old` here; newStage and the Stage's Run\nand then runQueued\n"
	if got := idx.pageProblems(page); len(got[6]) != 1 || len(got[7]) != 1 || len(got) != 2 {
		t.Errorf("a page: %v, want one stale name on lines 6 and 7 (none in its fenced block)", got)
	}
}
