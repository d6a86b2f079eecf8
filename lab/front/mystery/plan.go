package mystery

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/orderlab/orderlab/lab/scenario"
)

// A mystery runs one pitfall of the catalog with its knobs and its load
// drawn at random, each within a range where the pitfall still shows
// (docs/front-page.md, Mystery mode): a recipe per pitfall names the
// catalog phase that shows it and the dials it turns.

// dialKind is where a dial's value goes.
type dialKind int

const (
	knobDial      dialKind = iota // a knob, in the scenario's env
	paramDial                     // a query parameter of the phase's request
	loadDial                      // the phase's load: rate, concurrency, retries or duration
	latencyDial                   // the phase's db_latency
	stopAfterDial                 // the phase's db_stop: when Postgres goes away
	stopForDial                   // the phase's db_stop: for how long
)

// dial is one thing a mystery varies: an integer from Min to Max, both
// included, in Unit ("ms", "s", "KiB", or "" for a count).
type dial struct {
	Name     string
	Kind     dialKind
	Min, Max int
	Unit     string
	// Also are knobs set to the same value: LIMIT and WORKERS follow the
	// pool, as the catalog sizes them.
	Also []string
}

// recipe is how a mystery runs one pitfall.
type recipe struct {
	Pitfall string   // the catalog's scenario
	Phase   string   // its phase that shows the pitfall: the request, load and knobs start from it
	Targets []string // nil: the scenario's
	Mode    string   // the load's mode, when not the phase's
	Dials   []dial
}

// duration is how long the load runs against each service at full size:
// long enough for the pitfall rules to name it (their windows are at most a
// minute, their for at most 15 s; prometheus/rules/pitfalls.yml).
var duration = dial{Name: "duration", Kind: loadDial, Min: 60, Max: 90, Unit: "s"}

// poolOf is a pool size with the semaphore's permits and the pipeline's
// workers sized to it.
func poolOf(lo, hi int) dial {
	return dial{Name: "DB_MAX_CONNS", Kind: knobDial, Min: lo, Max: hi, Also: []string{"LIMIT", "WORKERS"}}
}

// recipes are the pitfalls a mystery runs. Each range keeps the pitfall
// in view at both ends, by the rule that names it: the offered load stays
// above the pool's bound (pool / hold) by at least a third at the corner
// nearest it, and the ratios a rule reads (the share of holds spent in
// statements, goroutines per request, heap per request) stay on their side
// of its threshold.
var recipes = []recipe{
	// 1,500 to 3,000 clients for 10 to 20 connections held 25 to 60 ms.
	{Pitfall: "pool-starvation", Phase: "orders", Dials: []dial{
		poolOf(10, 20), {Name: "db_delay", Kind: paramDial, Min: 25, Max: 60, Unit: "ms"},
		{Name: "concurrency", Kind: loadDial, Min: 1500, Max: 3000}, duration}},
	// One request in 5 to 20 leaks at 30 to 80/s: at least 1.5 leaks a
	// second dry a pool of 20 in under 15 s, and the rule needs a hold
	// older than 20 s.
	{Pitfall: "connection-leak", Phase: "leak", Dials: []dial{
		{Name: "LEAK_EVERY", Kind: knobDial, Min: 5, Max: 20},
		{Name: "delay", Kind: paramDial, Min: 10, Max: 30, Unit: "ms"},
		{Name: "rate", Kind: loadDial, Min: 30, Max: 80}, duration}},
	// 30 to 80 clients, each needing two connections, against 3 to 6.
	{Pitfall: "nested-acquire", Phase: "pool-4", Dials: []dial{
		poolOf(3, 6), {Name: "delay", Kind: paramDial, Min: 10, Max: 30, Unit: "ms"},
		{Name: "concurrency", Kind: loadDial, Min: 30, Max: 80}, duration}},
	// A downstream call of 100 to 250 ms inside the transaction: at pool 25
	// and 110 ms held the bound is 227/s, under the 300/s at least offered;
	// idle in transaction stays above 75 % of the hold.
	{Pitfall: "tx-across-downstream", Phase: "inside", Dials: []dial{
		poolOf(15, 25), {Name: "api_delay", Kind: paramDial, Min: 100, Max: 250, Unit: "ms"},
		{Name: "db_delay", Kind: paramDial, Min: 10, Max: 30, Unit: "ms"},
		{Name: "rate", Kind: loadDial, Min: 300, Max: 500}, duration}},
	// 20 to 25 ms more per round trip on 6 to 10 ms queries (and about
	// 1 ms of insert): Postgres runs the statements 22 % to 35 % of their
	// time (the rule: under 40 %), and the bound, at most 10 / 27 ms =
	// 370/s, stays under 520/s.
	{Pitfall: "db-latency", Phase: "latency-20ms", Dials: []dial{
		{Name: "db_latency", Kind: latencyDial, Min: 20, Max: 25, Unit: "ms"},
		{Name: "db_delay", Kind: paramDial, Min: 6, Max: 10, Unit: "ms"},
		{Name: "rate", Kind: loadDial, Min: 520, Max: 650}, duration}},
	// A fixed limit of 100 to 300 permits in front of a pool of 20, at
	// 1,200 to 1,800/s against a bound of at most 1,000/s.
	{Pitfall: "adaptive-limit", Phase: "fixed-20ms", Dials: []dial{
		{Name: "LIMIT", Kind: knobDial, Min: 100, Max: 300},
		{Name: "db_delay", Kind: paramDial, Min: 20, Max: 60, Unit: "ms"},
		{Name: "rate", Kind: loadDial, Min: 1200, Max: 1800}, duration}},
	// 1,500 to 2,500 clients resend each refusal at once, 3 to 8 times.
	{Pitfall: "retry-storm", Phase: "immediate", Dials: []dial{
		{Name: "db_delay", Kind: paramDial, Min: 30, Max: 70, Unit: "ms"},
		{Name: "concurrency", Kind: loadDial, Min: 1500, Max: 2500},
		{Name: "retries", Kind: loadDial, Min: 3, Max: 8}, duration}},
	// An audit write of 6 to 10 s per order at 300 to 400 orders/s: 1,800
	// to 4,000 goroutines pending (the rule: 1,000 beyond the connections)
	// against at most 2,000 requests. A pending audit costs 30 to 40 KiB
	// of RSS (its stack holds the 16 KiB record): 4,000 hold at most
	// 160 MiB, under the services' GOMEMLIMIT of 200 MiB in compose; the
	// catalog's 10,000 outgrow their 256 MiB containers, and the kernel
	// would kill the service before the reveal.
	{Pitfall: "backpressure-void", Phase: "orders", Dials: []dial{
		{Name: "AUDIT_DELAY", Kind: knobDial, Min: 6, Max: 10, Unit: "s"},
		{Name: "rate", Kind: loadDial, Min: 300, Max: 400}, duration}},
	// A buffer of 448 to 512 KiB per request (the rule: 256 KiB of heap
	// per request in flight), 1,500 to 2,500/s against a bound of 400/s,
	// on 230 to 260 connections, so 230 to 260 requests alive: 100 to
	// 130 MiB of buffers, over half the services' GOMEMLIMIT of 200 MiB in
	// compose (the rule's bar) and under what their 256 MiB containers
	// hold, and over the 128 MiB the rule asks of a service with no
	// GOMEMLIMIT (make local-lab) once the rest of the heap is counted.
	{Pitfall: "per-request-memory", Phase: "buffer", Dials: []dial{
		{Name: "REQUEST_BUFFER_BYTES", Kind: knobDial, Min: 448, Max: 512, Unit: "KiB"},
		{Name: "rate", Kind: loadDial, Min: 1500, Max: 2500},
		{Name: "concurrency", Kind: loadDial, Min: 230, Max: 260}, duration}},
	// 500 to 1,500 clients each holding an OS thread 150 to 300 ms.
	{Pitfall: "os-thread-pinning", Phase: "syscall", Dials: []dial{
		{Name: "delay", Kind: paramDial, Min: 150, Max: 300, Unit: "ms"},
		{Name: "concurrency", Kind: loadDial, Min: 500, Max: 1500}, duration}},
	// 1 to 3 workers doing 150 to 300 ms of blocking work for 60 to 150
	// clients (a closed loop, so that the queue stays for the rule's
	// windows): the queue is 20 times the workers or more, the pool of 40
	// nearly idle.
	{Pitfall: "blocked-event-loop", Phase: "workers-2", Mode: "closed", Dials: []dial{
		{Name: "WORKERS", Kind: knobDial, Min: 1, Max: 3},
		{Name: "delay", Kind: paramDial, Min: 150, Max: 300, Unit: "ms"},
		{Name: "concurrency", Kind: loadDial, Min: 60, Max: 150}, duration}},
	// Postgres away 4 to 10 s, 5 to 15 s into 40 to 60 s of 150 to 250/s:
	// at least 7 % of a minute's requests find no database.
	{Pitfall: "db-restart", Phase: "stop-5s", Dials: []dial{
		{Name: "after", Kind: stopAfterDial, Min: 5, Max: 15, Unit: "s"},
		{Name: "for", Kind: stopForDial, Min: 4, Max: 10, Unit: "s"},
		{Name: "rate", Kind: loadDial, Min: 150, Max: 250},
		{Name: "duration", Kind: loadDial, Min: 40, Max: 60, Unit: "s"}}},
}

// notRun are the pitfalls the alerts name that no mystery runs: still
// answers to choose from. too-many-clients needs a connection limit the
// running lab cannot set (scenario.InLab).
var notRun = []string{"too-many-clients"}

// Pitfalls are the pitfalls a mystery may run, one per recipe, where the
// lab can run them (db-latency and db-restart need the database proxy).
func Pitfalls() []string {
	out := make([]string, len(recipes))
	for i, r := range recipes {
		out[i] = r.Pitfall
	}
	return out
}

// among are the candidates whose pitfall is one of names (all of them
// when names is empty); an error names a pitfall no candidate runs.
func among(candidates []recipe, names []string) ([]recipe, error) {
	if len(names) == 0 {
		return candidates, nil
	}
	var out []recipe
	for _, n := range names {
		i := slices.IndexFunc(candidates, func(r recipe) bool { return r.Pitfall == n })
		if i < 0 {
			return nil, fmt.Errorf("%q is no pitfall a mystery runs in this lab", n)
		}
		out = append(out, candidates[i])
	}
	return out, nil
}

// mysteryQuick is how long a quick mystery's load runs against each
// service.
const mysteryQuick = 5 * time.Second

// Setting is one dial as a mystery set it, shown once it is answered.
type Setting struct {
	Name    string `json:"name"`
	Value   string `json:"value"`
	Range   string `json:"range"`   // what it could have been
	Catalog string `json:"catalog"` // the catalog phase's value; "" when it sets none
	// Also are the knobs set to the same value.
	Also []string `json:"also,omitempty"`
}

// plan is a mystery drawn: the scenario to run, the recipe and
// catalog scenario it came from, and what was drawn.
type plan struct {
	Recipe   recipe
	Base     scenario.Scenario
	Scenario scenario.Scenario
	Settings []Setting
}

// draw picks one of candidates and its dials with rng, and builds the
// scenario that runs it, named "mystery" throughout.
func draw(rng *rand.Rand, candidates []recipe, catalog func(string) (scenario.Scenario, bool)) (plan, error) {
	if len(candidates) == 0 {
		return plan{}, fmt.Errorf("no pitfall this lab can run as a mystery")
	}
	r := candidates[rng.IntN(len(candidates))]
	base, ok := catalog(r.Pitfall)
	if !ok {
		return plan{}, fmt.Errorf("the catalog has no %s", r.Pitfall)
	}
	i := slices.IndexFunc(base.Phases, func(p scenario.Phase) bool { return p.Name == r.Phase })
	if i < 0 || base.Phases[i].Load == nil || base.Phases[i].Request == nil {
		return plan{}, fmt.Errorf("%s has no HTTP phase %q", base.Name, r.Phase)
	}
	p := base.Phases[i]
	env := maps.Clone(base.Env)
	if env == nil {
		env = map[string]string{}
	}
	maps.Copy(env, p.Env)
	load, req := *p.Load, *p.Request
	if r.Mode != "" {
		load.Mode = r.Mode
	}
	u, err := url.Parse(req.Path)
	if err != nil {
		return plan{}, fmt.Errorf("%s, phase %s: path %q: %w", base.Name, p.Name, req.Path, err)
	}
	q := u.Query()
	pl := plan{Recipe: r, Base: base}
	for _, d := range r.Dials {
		n := d.Min + rng.IntN(d.Max-d.Min+1)
		v := d.format(n)
		set := Setting{Name: d.Name, Value: v, Range: d.format(d.Min) + " to " + d.format(d.Max), Also: d.Also}
		switch d.Kind {
		case knobDial:
			set.Catalog = env[d.Name]
			if d.Unit == "KiB" {
				v = strconv.Itoa(n * 1024)
				if b, err := strconv.Atoi(set.Catalog); err == nil {
					set.Catalog = d.format(b / 1024)
				}
			}
			for _, k := range append([]string{d.Name}, d.Also...) {
				env[k] = v
			}
		case paramDial:
			set.Catalog = q.Get(d.Name)
			q.Set(d.Name, v)
		case loadDial:
			set.Catalog = setLoad(&load, d.Name, n)
		case latencyDial:
			set.Catalog = optDuration(p.DBLatency)
			l := scenario.Duration(time.Duration(n) * time.Millisecond)
			p.DBLatency = &l
		case stopAfterDial, stopForDial:
			if p.DBStop == nil {
				return plan{}, fmt.Errorf("%s, phase %s: no db_stop to vary", base.Name, p.Name)
			}
			ds := *p.DBStop
			at := &ds.After
			if d.Kind == stopForDial {
				at = &ds.For
			}
			set.Catalog = at.D().String()
			*at = scenario.Duration(time.Duration(n) * time.Second)
			p.DBStop = &ds
		}
		pl.Settings = append(pl.Settings, set)
	}
	u.RawQuery = q.Encode()
	req.Path = u.String()
	p.Name, p.Env, p.Continue, p.Bound, p.Note = "mystery", nil, false, nil, ""
	p.Load, p.Request = &load, &req
	targets := r.Targets
	if targets == nil {
		targets = base.Targets
	}
	pl.Scenario = scenario.Scenario{Name: "mystery", Title: "which pitfall is this?",
		Reproduces: "a pitfall of the catalog, not named until it is answered",
		Question:   "Which pitfall is this? Watch the page and the board, then answer.",
		Targets:    slices.Clone(targets), Env: env, Phases: []scenario.Phase{p}, Panels: base.Panels,
		Cluster: base.Cluster, QuickDuration: scenario.Duration(mysteryQuick)}
	if err := pl.Scenario.Validate(); err != nil {
		return plan{}, fmt.Errorf("the mystery drawn from %s does not validate: %w", base.Name, err)
	}
	return pl, nil
}

// format writes n in d's unit: 25ms, 10s, 512KiB, 40.
func (d dial) format(n int) string {
	return strconv.Itoa(n) + d.Unit
}

// setLoad sets the load's field name to n and returns what it was.
func setLoad(l *scenario.Load, name string, n int) (was string) {
	switch name {
	case "rate":
		was, l.Rate = strconv.FormatFloat(l.Rate, 'f', -1, 64), float64(n)
	case "concurrency":
		was, l.Concurrency = strconv.Itoa(l.Concurrency), n
	case "retries":
		was, l.Retries = strconv.Itoa(l.Retries), n
	case "duration":
		was, l.Duration = l.Duration.D().String(), scenario.Duration(time.Duration(n)*time.Second)
	default:
		panic("mystery: no load field " + name)
	}
	if was == "0" || was == "0s" {
		was = ""
	}
	return was
}

func optDuration(d *scenario.Duration) string {
	if d == nil {
		return ""
	}
	return d.D().String()
}
