package composelab

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/orderlab/orderlab/lab/scenario"
	"github.com/orderlab/orderlab/lab/scenario/catalog"
)

// pitfallPlan is how TestDiagnosis runs one pitfall: the catalog
// scenario's phase that runs it, and the models where the catalog's
// expectations say it shows (its other models run that phase's fix).
type pitfallPlan struct {
	pitfall, phase string
	shows          []string
	// proxy: the phase needs the lab's database proxy (compose profile
	// dbproxy); its latency or outage reaches every service, so alerts on
	// the others are the run's too.
	proxy bool
	// also, by model: pitfalls the run holds besides its own, and why.
	also    map[string][]string
	alsoWhy string
	// concurrency, when set, bounds the requests in flight (the load's
	// connections) below the phase's.
	concurrency int
	// rate, when set, lowers an open load's arrivals below the phase's.
	rate float64
}

// pitfallPlans: the catalog's pitfalls, in its order, but
// too-many-clients, which docs/lab.md's recipe runs (tooManyClients).
var pitfallPlans = []pitfallPlan{
	// unbounded: "pool waits dominate latency"; the semaphore keeps the
	// pool busy with no acquire starved, the pipeline batches. Under the
	// 2 s deadline pgx closes the connections of the queries it ends, and
	// the pool spends the storm opening new ones: the alert counts those
	// as taken (docs/pitfall-alerts.md).
	{pitfall: "pool-starvation", phase: "orders", shows: []string{"unbounded"}},
	// The pipeline's audit queue bounds its goroutines. At 300 orders/s,
	// not the catalog's 1,000: a pending audit costs 30 to 40 KiB of RSS
	// (its goroutine's stack holds the 16 KiB record; the catalog's run
	// of 2026-12-02: 410 MiB at 10,000), so the catalog's 10,000 outgrow
	// a 256 MiB container and the kernel kills the service (the run of
	// 2026-12-07 00:45 UTC: the scenario could not give its knob back);
	// 3,000 hold about 120 MiB, and the rule needs 1,000.
	{pitfall: "backpressure-void", phase: "orders", shows: []string{"unbounded", "semaphore"}, rate: 300},
	// The semaphore and the pipeline keep few requests, and buffers, alive.
	// unbounded with at most 230 requests in flight: the catalog's 2,000
	// hold 1 GiB of buffers, and the kernel kills a container of 256 MiB
	// within seconds, between two scrapes, so no sample shows the heap
	// (the run of 2026-12-06); 230 hold 115 MiB, over half the services'
	// GOMEMLIMIT of 200 MiB (compose.yaml), which the alert reads against
	// (as the mystery draws), and the container survives.
	{pitfall: "per-request-memory", phase: "buffer", shows: []string{"unbounded"}, concurrency: 230,
		also:    map[string][]string{"unbounded": {"pool-starvation"}},
		alsoWhy: "2,000 requests/s against a pool that serves 400/s: unbounded's pool starves as well (docs/pitfall-alerts.md)"},
	{pitfall: "os-thread-pinning", phase: "syscall", shows: modelNames},
	{pitfall: "blocked-event-loop", phase: "workers-2", shows: []string{"pipeline"}},
	// The unbounded model's storm is named pool-starvation
	// (docs/pitfall-alerts.md); the catalog expects the storm of the
	// semaphore.
	{pitfall: "retry-storm", phase: "immediate", shows: []string{"semaphore"}},
	{pitfall: "adaptive-limit", phase: "fixed-100ms", shows: []string{"semaphore"}},
	{pitfall: "connection-leak", phase: "leak", shows: modelNames},
	// The pipeline's partial deadlock (two workers each holding an idle
	// connection, one request at a time) is named as a full one is.
	{pitfall: "nested-acquire", phase: "pool-4", shows: modelNames},
	// The pipeline batches the downstream call and keeps up.
	{pitfall: "tx-across-downstream", phase: "inside", shows: []string{"unbounded", "semaphore"}},
	// The pipeline batches and keeps up.
	{pitfall: "db-latency", phase: "latency-20ms", shows: []string{"unbounded", "semaphore"}, proxy: true},
	{pitfall: "db-restart", phase: "stop-5s", shows: modelNames, proxy: true},
}

// runTask is one pitfall to run on one model.
type runTask struct {
	plan  pitfallPlan
	model string
}

// tasksOf lists the pitfall runs: every model where the pitfall shows
// ("showing"), or one of them ("one": the one that ran fewest so far, so
// that the three share the run). They are taken in turns: each next run
// is on the model that ran longest ago, the catalog's first pitfall that
// it has, so that a model rests while the other two run, and a run seldom
// waits for its model's window to be read to its end.
func tasksOf(models string, proxy bool) []runTask {
	var pending []runTask
	picked := map[string]int{}
	for _, p := range pitfallPlans {
		if p.proxy != proxy {
			continue
		}
		shows := p.shows
		if models == "one" {
			least := slices.MinFunc(shows, func(a, b string) int { return picked[a] - picked[b] })
			shows = []string{least}
		}
		for _, m := range shows {
			picked[m]++
			pending = append(pending, runTask{p, m})
		}
	}
	var out []runTask
	lastRan := map[string]int{} // the model's last run's place in out, plus one
	for len(pending) > 0 {
		i := 0
		for j, t := range pending {
			if lastRan[t.model] < lastRan[pending[i].model] {
				i = j
			}
		}
		out = append(out, pending[i])
		lastRan[pending[i].model] = len(out)
		pending = slices.Delete(pending, i, i+1)
	}
	return out
}

// variantOf is the catalog scenario's phase that runs p, alone, on one
// model, with its load lasting at least load: the knobs of the phases it
// continues merged into its own, a burst turned into as many clients
// sending for load (the same queue, held), a db_stop kept as it is, and
// the plan's concurrency, when it sets one.
func variantOf(p pitfallPlan, model string, load time.Duration) (scenario.Scenario, string, error) {
	s, err := catalog.Get(p.pitfall)
	if err != nil {
		return s, "", err
	}
	i := slices.IndexFunc(s.Phases, func(ph scenario.Phase) bool { return ph.Name == p.phase })
	if i < 0 {
		return s, "", fmt.Errorf("%s: no phase %s", s.Name, p.phase)
	}
	ph := s.Phases[i]
	env := map[string]string{}
	for j := i; j >= 0; j-- {
		for k, v := range s.Phases[j].Env {
			if _, set := env[k]; !set {
				env[k] = v
			}
		}
		if !s.Phases[j].Continue {
			break
		}
	}
	ph.Env, ph.Continue = env, false
	if len(env) == 0 {
		ph.Env = nil
	}
	l := *ph.Load
	switch {
	case ph.DBStop != nil:
	case l.Mode == "burst":
		l.Mode, l.Duration, l.Requests, l.Warmup = "closed", scenario.Duration(load), 0, nil
	case l.Duration.D() < load:
		l.Duration = scenario.Duration(load)
	}
	if p.concurrency > 0 {
		l.Concurrency = p.concurrency
	}
	if p.rate > 0 {
		l.Rate = p.rate
	}
	ph.Load = &l
	says := catalogSays(s, p.phase, model)
	s.Env, ph.Env = forModel(s.Env, model), forModel(ph.Env, model)
	s.Phases, s.Targets, s.Expect = []scenario.Phase{ph}, []string{model}, nil
	return s, says, nil
}

// TestPitfallVariants: every plan's variant is one phase of its catalog
// scenario on one model, which parses, with the load's connections the
// plan's when it bounds them (per-request-memory: the requests in flight
// that a 256 MiB container survives) and its rate the plan's when it
// lowers it (backpressure-void: the pending audits it survives).
func TestPitfallVariants(t *testing.T) {
	for _, p := range pitfallPlans {
		for _, m := range p.shows {
			s, _, err := variantOf(p, m, time.Minute)
			if err != nil {
				t.Fatalf("%s on %s: %v", p.pitfall, m, err)
			}
			if _, err := writeVariant(t.TempDir(), p.pitfall, s); err != nil {
				t.Errorf("%s on %s: %v", p.pitfall, m, err)
			}
			if len(s.Phases) != 1 || !slices.Equal(s.Targets, []string{m}) {
				t.Errorf("%s on %s: %d phases on %v, want 1 on %s", p.pitfall, m, len(s.Phases), s.Targets, m)
				continue
			}
			if c := s.Phases[0].Load.Concurrency; p.concurrency > 0 && c != p.concurrency {
				t.Errorf("%s on %s: %d connections, want the plan's %d", p.pitfall, m, c, p.concurrency)
			}
			if r := s.Phases[0].Load.Rate; p.rate > 0 && r != p.rate {
				t.Errorf("%s on %s: %g/s, want the plan's %g/s", p.pitfall, m, r, p.rate)
			}
		}
	}
}

// forModel leaves out of env the knobs of the other models (LIMIT is the
// semaphore's): a scenario sets none that none of its targets has.
func forModel(env map[string]string, model string) map[string]string {
	out := maps.Clone(env)
	for _, k := range scenario.Knobs {
		if k.Services != nil && !slices.Contains(k.Services, model) {
			delete(out, k.Name)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// catalogSays joins the catalog's expectations of phase on model.
func catalogSays(s scenario.Scenario, phase, model string) string {
	var out []string
	for _, e := range s.Expect {
		if (e.Target == "" || e.Target == model) && (e.Phase == "" || e.Phase == phase) {
			out = append(out, strings.TrimSpace(e.Says))
		}
	}
	return strings.Join(out, "; ")
}

// writeVariant writes s where a lab container sees it (dir mounted on
// /diag) and returns its path there.
func writeVariant(dir, name string, s scenario.Scenario) (string, error) {
	data, err := yaml.Marshal(s)
	if err != nil {
		return "", err
	}
	if _, err := scenario.Parse(data); err != nil {
		return "", fmt.Errorf("the variant of %s does not parse: %w\n%s", s.Name, err, data)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".yaml"), data, 0o644); err != nil {
		return "", err
	}
	return "/diag/" + name + ".yaml", nil
}

// TestPitfallRunsTakeTurns: each run is on the model that ran longest
// ago among those with a run left, so that a model rests while the others
// run; in "one" every pitfall runs once and the three share the runs.
func TestPitfallRunsTakeTurns(t *testing.T) {
	for _, models := range []string{"one", "showing"} {
		for _, proxy := range []bool{false, true} {
			tasks := tasksOf(models, proxy)
			var ran []string
			for _, task := range tasks {
				ran = append(ran, task.plan.pitfall+"@"+task.model)
			}
			last := map[string]int{} // a model's last run's place, plus one
			for i, task := range tasks {
				for _, later := range tasks[i:] {
					if last[later.model] < last[task.model] {
						t.Errorf("%s, proxy %v: run %d is %s while %s, which ran longer ago, has a run left: %v", models, proxy, i+1, ran[i], later.model, ran)
						break
					}
				}
				last[task.model] = i + 1
			}
			if models != "one" {
				continue
			}
			count := map[string]int{}
			seen := map[string]bool{}
			for _, task := range tasks {
				count[task.model]++
				if seen[task.plan.pitfall] {
					t.Errorf("one, proxy %v: %s runs twice: %v", proxy, task.plan.pitfall, ran)
				}
				seen[task.plan.pitfall] = true
			}
			if !proxy && (slices.Max(slices.Collect(maps.Values(count)))-slices.Min(slices.Collect(maps.Values(count))) > 1) {
				t.Errorf("one: the models share the runs unevenly, %v: %v", count, ran)
			}
			if !proxy {
				t.Logf("one: %v", ran)
			}
		}
	}
}
