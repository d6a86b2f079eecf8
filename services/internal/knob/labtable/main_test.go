package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orderlab/orderlab/services/internal/knob"
)

const generated = "../../../../lab/scenario/knobs_gen.go"

// The lab's table is what the declarations make of it today.
func TestTheLabsKnobTableIsUpToDate(t *testing.T) {
	want, err := table(knob.All, knob.Models)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.FromSlash(generated))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale: run go generate ./services/internal/knob", strings.TrimPrefix(generated, "../../../../"))
	}
}

// A knob of the runner's stays out of the table, a knob of one model says
// which, and a knob that is not live says why; a runner's knob that is no
// longer declared, or a restart without its reason, is an error.
func TestTheTableFollowsTheDeclarations(t *testing.T) {
	decl := []knob.Knob{
		{Name: "DB_MAX_CONNS", Live: true},
		{Name: "WORKERS", Models: []string{"pipeline"}, Live: true},
		{Name: "HTTP_SERVER", Restart: "built at start"},
	}
	for _, name := range runners {
		decl = append(decl, knob.Knob{Name: name, Restart: "the runner's"})
	}
	src, err := table(decl, []string{"pipeline"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`{Name: "DB_MAX_CONNS"},`, `{Name: "WORKERS", Services: []string{"pipeline"}},`,
		`{Name: "HTTP_SERVER", Restart: "built at start"},`, `var Services = []string{"pipeline"}`} {
		if !strings.Contains(string(src), want) {
			t.Errorf("the table lacks %s:\n%s", want, src)
		}
	}
	if strings.Contains(string(src), `"DATABASE_URL"`) {
		t.Errorf("the table has a knob of the runner's:\n%s", src)
	}
	if _, err := table(decl[:3], nil); err == nil || !strings.Contains(err.Error(), "not declared") {
		t.Errorf("runners' knobs undeclared: err %v", err)
	}
	if _, err := table(append(decl, knob.Knob{Name: "X"}), nil); err == nil || !strings.Contains(err.Error(), "X is not live") {
		t.Errorf("a restart without a reason: err %v", err)
	}
}
