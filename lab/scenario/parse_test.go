package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const valid = `
name: t
title: a test
reproduces: nothing
question: does it parse?
targets: [unbounded, semaphore]
env: {DB_MAX_CONNS: "20", LIMIT: "5"}
phases:
  - name: p
    request: {path: "/work/db?delay=20ms"}
    load: {mode: closed, concurrency: 500, duration: 30s}
    bound: {concurrency: 20, hold: 20ms, what: pool}
expect:
  - target: unbounded
    says: fast
    slo: "p99<250ms"
panels: [Goroutines]
`

func TestParseReadsAFile(t *testing.T) {
	s, err := Parse([]byte(valid))
	if err != nil {
		t.Fatal(err)
	}
	p := s.Phases[0]
	if p.Load.Duration.D() != 30*time.Second || p.Bound.RPS() != 1000 || s.Env["LIMIT"] != "5" {
		t.Errorf("parsed %+v, load %+v, bound %+v", s, p.Load, p.Bound)
	}
	q := Quick(s)
	if l := q.Phases[0].Load; l.Duration.D() != 2*time.Second || l.Concurrency != 125 {
		t.Errorf("Quick load = %+v, want 2 s and 500 / 4 = 125 connections", l)
	}
	if s.Phases[0].Load.Concurrency != 500 {
		t.Error("Quick changed the original")
	}
}

// A continuing phase follows an HTTP phase; its env may change only knobs
// that change live.
func TestParseContinue(t *testing.T) {
	two := strings.Replace(valid, "expect:\n", `  - name: q
    continue: true
    request: {path: "/work/db?delay=100ms"}
    load: {mode: closed, concurrency: 500, duration: 30s, retry: honor, retry_max_wait: 5s}
expect:
`, 1)
	s, err := Parse([]byte(two))
	if err != nil {
		t.Fatal(err)
	}
	if q := s.Phases[1]; !q.Continue || q.Load.Retry != "honor" || q.Load.RetryMaxWait.D() != 5*time.Second {
		t.Errorf("phase q = %+v, load %+v", q, q.Load)
	}
	withEnv := strings.Replace(two, "    continue: true\n", "    continue: true\n    env: {LIMIT: \"7\"}\n", 1)
	if s, err := Parse([]byte(withEnv)); err != nil || s.Phases[1].Env["LIMIT"] != "7" {
		t.Errorf("a continuing phase with a live knob: %v, env %v; want it parsed", err, s.Phases[1].Env)
	}
	restart := strings.Replace(two, "    continue: true\n", "    continue: true\n    env: {HTTP_SERVER: nbio}\n", 1)
	if _, err := Parse([]byte(restart)); err == nil || !strings.Contains(err.Error(), "cannot change live") {
		t.Errorf("a continuing phase with a knob that needs a restart: %v, want an error", err)
	}
}

func TestParseRejectsWhatTheServicesWouldNotRead(t *testing.T) {
	for _, c := range []struct{ from, to, want string }{
		{"name: t", "name: t\ncolour: red", "colour"},
		{`LIMIT: "5"`, `LIMITS: "5"`, "LIMITS is not a documented knob"},
		{"targets: [unbounded, semaphore]", "targets: [unbounded, pipeline]", "LIMIT applies to [semaphore]"},
		{"delay=20ms", "dealy=20ms", `query parameter "dealy"`},
		{"/work/db?", "/work/disk?", "not an endpoint"},
		{"mode: closed", "mode: sideways", "sideways"},
		{"duration: 30s", "duration: 30", "duration"},
		{`"p99<250ms"`, `"p99 about 250ms"`, "slo"},
		{"target: unbounded", "target: pipeline", "not among the targets"},
		{"concurrency: 500", "concurrency: 50000", "open-files"},
		{"panels: [Goroutines]", "panels: []", "no panels"},
		{"duration: 30s}", "duration: 30s, retry: sometimes}", `load.retry "sometimes"`},
		{"duration: 30s}", "duration: 30s, scrape: 1ms}", "load.scrape 1ms"},
		{"  - name: p\n", "  - name: p\n    continue: true\n", "continue needs an HTTP phase before it"},
		{"panels:", "cluster: {role: {connection_limit: 5}}\npanels:", "need owned: true"},
		{"panels:", "cluster: {owned: true, pgbouncer: {mode: statement, pool: 5}}\npanels:", "want mode transaction or session"},
		{"  - name: p\n", "  - name: p\n    pgbouncer: true\n", "pgbouncer needs cluster.pgbouncer"},
		{"  - name: p\n", "  - name: p\n    db_stop: {after: 1s, for: 1s, ledger: 5}\n", "db_stop needs cluster.owned"},
		{"  - name: p\n", "  - name: p\n    db_latency: -1s\n", "db_latency must not be negative"},
	} {
		_, err := Parse([]byte(strings.Replace(valid, c.from, c.to, 1)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q -> %q: error %v, want one that mentions %q", c.from, c.to, err, c.want)
		}
	}
}

// Quick divides every pool-sized knob by one factor, the largest pool
// over 5: here 40 / 5 = 8, rounded, at least 1.
func TestQuickShrinksEveryPoolByOneFactor(t *testing.T) {
	s := Scenario{Env: map[string]string{"LIMIT": "20"}, Phases: []Phase{
		{Env: map[string]string{"DB_MAX_CONNS": "4"}},
		{Env: map[string]string{"DB_MAX_CONNS": "40", "WORKERS": "12", "QUEUE_CAPACITY": "1024"}},
		{},
	}}
	q := Quick(s)
	if q.QuickFactor != 8 || q.Env["DB_MAX_CONNS"] != "3" || q.Env["LIMIT"] != "3" {
		t.Errorf("quick factor %v, scenario env %v; want 8, the default pool of 20 and LIMIT 20 both 20 / 8 = 3", q.QuickFactor, q.Env)
	}
	for i, want := range []string{"1", "5", ""} {
		if got := q.Phases[i].Env["DB_MAX_CONNS"]; got != want {
			t.Errorf("phase %d: quick DB_MAX_CONNS = %q, want %q", i, got, want)
		}
	}
	if e := q.Phases[1].Env; e["WORKERS"] != "2" || e["QUEUE_CAPACITY"] != "128" {
		t.Errorf("phase 1: %v; want WORKERS 12 / 8 = 2 and QUEUE_CAPACITY 1024 / 8 = 128", e)
	}
}

// Quick keeps a phase's own smaller pool (fix A of too-many-clients sizes
// it to fit) and fits a db_stop into its few seconds.
func TestQuickKeepsASmallerPoolAndShortensAStop(t *testing.T) {
	s, err := Parse([]byte(strings.Replace(valid, "  - name: p\n", "  - name: p\n    env: {DB_MAX_CONNS: \"2\"}\n    db_stop: {after: 3s, for: 5s, ledger: 50}\n", 1) +
		"cluster: {owned: true}\n"))
	if err != nil {
		t.Fatal(err)
	}
	q := Quick(s)
	p := q.Phases[0]
	if p.Env["DB_MAX_CONNS"] != "2" || q.QuickFactor != 1 {
		t.Errorf("quick env: scenario %v, phase %v, factor %v; want the phase's pool of 2 kept (the largest that runs: factor 1)", q.Env, p.Env, q.QuickFactor)
	}
	if d := p.DBStop; d.After.D() != 500*time.Millisecond || d.For.D() != time.Second || p.Load.Duration.D() != 3*time.Second {
		t.Errorf("quick db_stop %+v over %s; want 0.5 s in, for 1 s, in 3 s of load", d, p.Load.Duration.D())
	}
}

// The scenario files committed beside their reports (docs/results) still
// parse: their reports say how to run them again.
func TestCommittedScenarioFilesParse(t *testing.T) {
	files, err := filepath.Glob("../../docs/results/*/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenario file under docs/results (%v)", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(data); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}
