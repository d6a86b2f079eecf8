package main

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/orderlab/orderlab/internal/cli"
	"github.com/orderlab/orderlab/internal/pgdb"
	"github.com/orderlab/orderlab/lab/scenario/catalog"
)

// TestScenarioDatabaseComesFromTheEnvironmentItIsGiven: -db defaults to
// DATABASE_URL of the getenv run is given, then to the local Postgres.
func TestScenarioDatabaseComesFromTheEnvironmentItIsGiven(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{nil, []string{"burst-1000"}, pgdb.DefaultURL},
		{map[string]string{"DATABASE_URL": "postgres://a@127.0.0.1:5/x"}, []string{"burst-1000"}, "postgres://a@127.0.0.1:5/x"},
		{map[string]string{"DATABASE_URL": "postgres://a@127.0.0.1:5/x"}, []string{"-db", "postgres://b@127.0.0.1:6/y", "burst-1000"}, "postgres://b@127.0.0.1:6/y"},
	} {
		p, err := parseScenarioCmd(c.args, func(k string) string { return c.env[k] }, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if p.local.DatabaseURL != c.want || len(p.todo) != 1 || p.todo[0].Name != "burst-1000" {
			t.Errorf("env %v, args %q: database %q, scenarios %d; want %q and burst-1000", c.env, c.args, p.local.DatabaseURL, len(p.todo), c.want)
		}
	}
}

func TestScenarioListsTheCatalogInOrder(t *testing.T) {
	code, stdout, stderr := runCLI(t, "scenario", "-list")
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if !strings.HasPrefix(strings.Join(strings.Fields(lines[0]), " "), "# scenario title") || !strings.HasSuffix(lines[0], "in the lab") {
		t.Errorf("header %q, want #, scenario, title, in the lab", lines[0])
	}
	lines = lines[1:]
	if len(lines) != len(catalog.Order) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(catalog.Order), stdout)
	}
	for i, name := range catalog.Order {
		if f := strings.Fields(lines[i]); f[0] != strconv.Itoa(i+1) || f[1] != name {
			t.Errorf("line %d: %q, want %d %s first", i, lines[i], i+1, name)
		}
		if !strings.Contains(lines[i], "  yes") && !strings.Contains(lines[i], "  no: needs ") {
			t.Errorf("line %d: %q, want yes or no with the reason", i, lines[i])
		}
	}
}

func TestScenarioUsageErrorsExitTwo(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"scenario"}, "name a scenario"},
		{[]string{"scenario", "no-such-scenario"}, `no scenario "no-such-scenario"`},
		{[]string{"scenario", "-metrics", "a=http://127.0.0.1:1/", "burst-1000"}, "-metrics a without -target a"},
		{[]string{"scenario", "-bogus"}, "flag provided but not defined"},
	} {
		code, _, stderr := runCLI(t, c.args...)
		if code != cli.ExitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
	if code, _, _ := runCLI(t, "scenario", "-h"); code != cli.ExitOK {
		t.Errorf("scenario -h: exit %d, want 0", code)
	}
}

// A NAME ending in .yaml is a scenario file of one's own, parsed strictly
// and without a catalog number.
func TestScenarioRunsAFileOfOnesOwn(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "mine.yaml")
	if err := os.WriteFile(good, []byte(`name: mine
title: t
reproduces: r
question: q
targets: [semaphore]
phases:
  - name: p
    request: {path: /work/db}
    load: {mode: closed, concurrency: 1, duration: 1s}
expect: [{says: s}]
panels: [Pool acquire wait p99]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: bad\nnosuchfield: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := parseScenarioCmd([]string{good}, func(string) string { return "" }, io.Discard)
	if err != nil || len(p.todo) != 1 || p.todo[0].Name != "mine" || p.todo[0].Number != 0 {
		t.Fatalf("%s: %v, %+v", good, err, p)
	}
	if _, err := parseScenarioCmd([]string{bad}, func(string) string { return "" }, io.Discard); err == nil || !strings.Contains(err.Error(), "bad.yaml") {
		t.Errorf("%s: %v, want a parse error naming the file", bad, err)
	}
}
