//go:build composelab

package composelab

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
	// unproven, by model: why the diagonal is not held there.
	unproven map[string]string
	// also, by model: pitfalls the run holds besides its own, and why.
	also    map[string][]string
	alsoWhy string
}

// pitfallPlans: the catalog's pitfalls, in its order, but
// too-many-clients, which docs/lab.md's recipe runs (tooManyClients).
var pitfallPlans = []pitfallPlan{
	// unbounded: "pool waits dominate latency"; the semaphore keeps the
	// pool busy with no acquire starved, the pipeline batches.
	{pitfall: "pool-starvation", phase: "orders", shows: []string{"unbounded"},
		unproven: map[string]string{"unbounded": "In compose on a busy machine the 2 s deadline ends queries in flight, pgx closes each such connection, " +
			"and the pool spends the storm making new ones: 6 to 19 of its 20 connections constructing, 2 to 13 acquired " +
			"(`job:orderlab_db_pool_utilization:avg30s` 0.15 to 0.46, not the 0.9 the alert asks), about 25 acquires/s instead of 400, " +
			"Postgres running a statement on 4 to 50 % of what is acquired. Waits (p99 2.4 to 3.4 s), waited acquires (78 to 99 %) " +
			"and acquires dying at their deadline (66 to 738/s) are pool-starvation's, but the pool is not full of busy connections, " +
			"so no alert names it; a connection being made is not one the alerts count (2026-12-06, 1-minute load average 15 to 40 from other jobs)."}},
	// The pipeline's audit queue bounds its goroutines.
	{pitfall: "backpressure-void", phase: "orders", shows: []string{"unbounded", "semaphore"}},
	// The semaphore and the pipeline keep few requests, and buffers, alive.
	{pitfall: "per-request-memory", phase: "buffer", shows: []string{"unbounded"},
		also: map[string][]string{"unbounded": {"pool-starvation"}},
		unproven: map[string]string{"unbounded": "compose gives each service 256 MiB: 2,000 requests/s of 512 KiB buffers get " +
			"unbounded killed by the kernel within about 3 s of the phase's start, between two scrapes, before any sample shows " +
			"the heap per request; it comes back without the buffer (a knob changed live does not survive a restart) and shows " +
			"only the starved pool for the rest of the phase. The alert asks for 256 MiB of heap, which a 256 MiB container never reaches; " +
			"what is left of the pitfall is a restart (`up` 0 for one scrape, a new `process_start_time_seconds`), which names no cause."},
		alsoWhy: "2,000 requests/s against a pool that serves 400/s: unbounded's pool starves as well (docs/pitfall-alerts.md)"},
	{pitfall: "os-thread-pinning", phase: "syscall", shows: modelNames},
	{pitfall: "blocked-event-loop", phase: "workers-2", shows: []string{"pipeline"}},
	// The unbounded model's storm is named pool-starvation
	// (docs/pitfall-alerts.md); the catalog expects the storm of the
	// semaphore.
	{pitfall: "retry-storm", phase: "immediate", shows: []string{"semaphore"}},
	{pitfall: "adaptive-limit", phase: "fixed-100ms", shows: []string{"semaphore"}},
	{pitfall: "connection-leak", phase: "leak", shows: modelNames},
	{pitfall: "nested-acquire", phase: "pool-4", shows: modelNames,
		unproven: map[string]string{"pipeline": "after the deadlock as it opens, the pipeline runs one request at a time with two " +
			"workers each holding an idle connection: 3.1 to 3.5 acquires waiting, `statement_share` 0.23, none idle in transaction, " +
			"but 70 to 83 % of the pool of 4 acquired (the alert asks 90 %), Postgres active on 10 to 31 % of it (the alert asks under 20 %) " +
			"and an acquire wait p99 of 0.10 s: a partial deadlock the alert, written for a full one, does not name."}},
	// The pipeline batches the downstream call and keeps up.
	{pitfall: "tx-across-downstream", phase: "inside", shows: []string{"unbounded", "semaphore"},
		unproven: map[string]string{"unbounded": "the 1 s deadline ends transactions in flight and the pool makes their " +
			"connections again (up to 19 constructing), as under pool-starvation: 60 to 85 % of what is acquired idle in " +
			"transaction, waits p99 2.4 to 2.7 s, but `job:orderlab_db_pool_utilization:avg30s` at 0.9 or more for 15 s only " +
			"(14:28:30 to 14:28:40), so the alert was pending 10 s and never fired (2026-12-06, the machine's load average 15 to 40)."}},
	// The pipeline batches and keeps up.
	{pitfall: "db-latency", phase: "latency-20ms", shows: []string{"unbounded", "semaphore"}, proxy: true,
		unproven: map[string]string{"unbounded": "the 2 s deadline ends queries in flight and the pool makes their connections " +
			"again (2 to 9 constructing), as under pool-starvation: about 50 acquires/s of the 400 offered, waits p99 2.2 s, " +
			"a mean hold of 22 to 34 ms, but `job:orderlab_db_pool_utilization:avg30s` 0.16 to 0.46, so the pool never reads as " +
			"saturated and the alert, which asks that, stays silent; Postgres active on 4 to 52 % of what is acquired."}},
	{pitfall: "db-restart", phase: "stop-5s", shows: modelNames, proxy: true},
}

// runTask is one pitfall to run on one model.
type runTask struct {
	plan  pitfallPlan
	model string
}

// tasksOf lists the pitfall runs: every model where the pitfall shows
// ("showing"), or one of them ("one": the one that ran fewest so far, so
// that the three share the run). They are taken so that a model rests
// while the next one runs.
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
	last := ""
	for len(pending) > 0 {
		i := slices.IndexFunc(pending, func(t runTask) bool { return t.model != last })
		if i < 0 {
			i = 0
		}
		out = append(out, pending[i])
		last = pending[i].model
		pending = slices.Delete(pending, i, i+1)
	}
	return out
}

// variantOf is the catalog scenario's phase that runs p, alone, on one
// model, with its load lasting at least load: the knobs of the phases it
// continues merged into its own, a burst turned into as many clients
// sending for load (the same queue, held), a db_stop kept as it is.
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
	ph.Load = &l
	says := catalogSays(s, p.phase, model)
	s.Env, ph.Env = forModel(s.Env, model), forModel(ph.Env, model)
	s.Phases, s.Targets, s.Expect = []scenario.Phase{ph}, []string{model}, nil
	return s, says, nil
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

// howOf says what a variant runs, in words, for the report.
func howOf(s scenario.Scenario) string {
	ph := s.Phases[0]
	l := ph.Load
	var what []string
	switch l.Mode {
	case "open":
		what = append(what, fmt.Sprintf("%s %s at %g/s (at most %d connections) for %s", cmpOr(ph.Request.Method, "GET"), ph.Request.Path, l.Rate, l.Concurrency, l.Duration.D()))
	default:
		what = append(what, fmt.Sprintf("%d %s clients sending %s %s for %s", l.Concurrency, l.Mode, cmpOr(ph.Request.Method, "GET"), ph.Request.Path, l.Duration.D()))
	}
	if l.Retry != "" {
		what = append(what, "retry "+l.Retry)
	}
	env := maps.Clone(s.Env)
	if env == nil {
		env = map[string]string{}
	}
	maps.Copy(env, ph.Env)
	var knobs []string
	for _, k := range slices.Sorted(maps.Keys(env)) {
		knobs = append(knobs, k+"="+env[k])
	}
	if len(knobs) > 0 {
		what = append(what, strings.Join(knobs, " "))
	}
	if ph.DBLatency != nil {
		what = append(what, "the database proxy adding "+ph.DBLatency.D().String()+" per round trip")
	}
	if ph.DBStop != nil {
		what = append(what, fmt.Sprintf("the database proxy down %s after %s", ph.DBStop.For.D(), ph.DBStop.After.D()))
	}
	return "`lab scenario` of a file: " + strings.Join(what, "; ") + "."
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
