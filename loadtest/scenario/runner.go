package scenario

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/orderlab/orderlab/internal/pgdb"
	"github.com/orderlab/orderlab/loadtest/attack"
	"github.com/orderlab/orderlab/loadtest/lab"
	"github.com/orderlab/orderlab/loadtest/measure"
	"github.com/orderlab/orderlab/loadtest/report"
	"github.com/orderlab/orderlab/loadtest/tasks"
)

// Endpoint is a running service the runner did not start (the compose lab).
type Endpoint struct {
	URL        string // API base, e.g. http://127.0.0.1:8081
	MetricsURL string // its /metrics
}

// Runner runs scenarios and writes their results.
type Runner struct {
	// BinDir holds the built services; the runner starts them on free
	// loopback ports with each phase's env, against a database it creates
	// on DatabaseURL's server and drops afterwards.
	BinDir      string
	DatabaseURL string
	// Endpoints, when set, are used instead: the services are not started
	// and the scenario's env is not applied (the runner says so).
	Endpoints map[string]Endpoint
	Out       string // results go to Out/<scenario>/<timestamp>.{json,md,html}
	Quick     bool   // shorten every phase to seconds (see Quick)
	// Count runs the whole scenario this many times over (default 1), so
	// that its tables quote the median and the range of every figure.
	Count int
	Log   io.Writer
	// Pause between targets (default 2 s, quick 200 ms); Scrape is the
	// metrics interval (default DefaultScrape) of the phases that set none.
	Pause, Scrape time.Duration
}

// DefaultScrape is the interval between scrapes of a service's metrics
// when neither the phase (load.scrape) nor the Runner sets one.
const DefaultScrape = 250 * time.Millisecond

// Files are the paths a run wrote.
type Files struct{ JSON, Markdown, HTML string }

// Run runs s (Count times) and writes its results. A phase that could not
// run stops the scenario; the results so far are still written.
func (r *Runner) Run(ctx context.Context, s Scenario) (*Result, Files, error) {
	if r.Quick {
		s = Quick(s)
	}
	if r.Log == nil {
		r.Log = io.Discard
	}
	pause := r.Pause
	if pause <= 0 {
		pause = measure.DefaultPause
		if r.Quick {
			pause = 200 * time.Millisecond
		}
	}
	res := &Result{Schema: Schema, Scenario: s, Quick: r.Quick, Local: r.Endpoints == nil, Count: max(1, r.Count),
		StartedAt: time.Now().UTC(), Host: report.New("", nil).Host}
	stamp := res.StartedAt.Format("20060102T150405Z")
	dir := filepath.Join(r.Out, s.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, Files{}, err
	}
	fmt.Fprintf(r.Log, "== %s: %s\n", s.Name, s.Title)
	runErr := r.repeat(ctx, s, res, pause, filepath.Join(dir, stamp+"-logs"))
	res.Elapsed = time.Since(res.StartedAt).Round(time.Millisecond).Seconds()
	files, err := write(dir, stamp, res)
	return res, files, errors.Join(runErr, err)
}

// repeat runs every phase of s res.Count times over, against one database
// that it drops at the end. Each repetition appends its runs to the phases'
// results, so that a table can quote the median and the range.
func (r *Runner) repeat(ctx context.Context, s Scenario, res *Result, pause time.Duration, logDir string) (err error) {
	var be *backend
	defer func() {
		if be != nil {
			err = errors.Join(err, be.close(context.WithoutCancel(ctx)))
		}
	}()
	for rep := range res.Count {
		if res.Count > 1 {
			fmt.Fprintf(r.Log, "== repetition %d of %d\n", rep+1, res.Count)
		}
		if err := r.phases(ctx, s, res, rep, pause, &be, logDir); err != nil {
			return err
		}
	}
	return nil
}

// phases runs every phase once (repetition rep), appending to res.Phases.
// A service started for a phase that the next one continues is kept
// running for it.
func (r *Runner) phases(ctx context.Context, s Scenario, res *Result, rep int, pause time.Duration, be **backend, logDir string) error {
	kept := map[string]*lab.Lab{}
	defer func() {
		for name, running := range kept {
			r.stop(name, running)
		}
	}()
	for i, p := range s.Phases {
		if err := ctx.Err(); err != nil {
			return err
		}
		if rep == 0 {
			pr := PhaseResult{Name: p.Name}
			if p.Bound != nil {
				pr.BoundRPS = p.Bound.RPS()
			}
			res.Phases = append(res.Phases, pr)
		}
		pr := &res.Phases[i]
		if p.Tasks != nil {
			t := runTasks(*p.Tasks)
			pr.addTasks(t)
			fmt.Fprintf(r.Log, "-- %s: %d jobs in %s\n", p.Name, t.Jobs, report.FormatSeconds(t.ElapsedSeconds))
			continue
		}
		if !p.Continue {
			pr.Env = merged(s.Env, p.Env)
		} else {
			pr.Env = res.Phases[i-1].Env
		}
		if r.Endpoints == nil && *be == nil {
			var err error
			if *be, err = newBackend(ctx, r.DatabaseURL, s, r.Log); err != nil {
				return err
			}
		}
		if r.Endpoints != nil && len(pr.Env) > 0 && !p.Continue && rep == 0 {
			fmt.Fprintf(r.Log, "   not starting services: set %s on them yourself\n", envString(pr.Env))
		}
		if r.Endpoints != nil && rep == 0 && (s.Cluster != nil || p.PgBouncer || p.DBLatency != nil || p.DBStop != nil) {
			fmt.Fprintln(r.Log, "   against running services the database side (cluster, pgbouncer, db_latency, db_stop) is not set up: see docs/lab.md")
		}
		if pr.Loadtest == nil {
			pr.Loadtest = report.New(p.Load.Mode, []string{"scenario", s.Name, p.Name})
		}
		keep := i+1 < len(s.Phases) && s.Phases[i+1].Continue
		for j, name := range s.Targets {
			if j > 0 && !measure.Sleep(ctx, pause) {
				break
			}
			running := kept[name]
			delete(kept, name)
			if !p.Continue && running != nil {
				r.stop(name, running)
				running = nil
			}
			running, err := r.target(ctx, s, p, name, pr, *be, running, logDir)
			if running != nil {
				if keep && err == nil {
					kept[name] = running
				} else {
					r.stop(name, running)
				}
			}
			if err != nil {
				return fmt.Errorf("phase %s: %w", p.Name, err)
			}
		}
	}
	return nil
}

func (r *Runner) stop(name string, running *lab.Lab) {
	if err := running.Stop(); err != nil {
		fmt.Fprintf(r.Log, "   stopping %s: %v\n", name, err)
	}
}

// target runs phase p against one service and appends the run to rep.
// Locally the service is started for this run alone, with env, unless
// running (the service a continued phase left running) is given; the caller
// stops the service target returns when no later phase continues on it.
// Meanwhile the other services hold no connections and no CPU, and every
// run that is not a continuation starts from a fresh process (a clean RSS
// baseline).
func (r *Runner) target(ctx context.Context, s Scenario, p Phase, name string, pr *PhaseResult,
	be *backend, running *lab.Lab, logDir string) (*lab.Lab, error) {
	ep, ok := r.Endpoints[name]
	var more []string
	if r.Endpoints == nil {
		if err := be.setLatency(p); err != nil {
			return running, err
		}
		replicas := 1
		if s.Cluster != nil {
			replicas = max(1, s.Cluster.Replicas)
		}
		if running == nil {
			how := ""
			if replicas > 1 {
				how = fmt.Sprintf("%d replicas of ", replicas)
			}
			if p.PgBouncer {
				how = "through PgBouncer, " + how
			}
			fmt.Fprintf(r.Log, "   starting %s%s with %s\n", how, name, envString(pr.Env))
			var err error
			running, err = lab.Start(ctx, lab.Config{BinDir: r.BinDir, Services: []string{name}, Env: pr.Env,
				Database: be.urlFor(p), LogDir: logDir, Replicas: replicas})
			if err != nil {
				return nil, err
			}
		}
		svc := running.Services[0]
		ep, ok = Endpoint{URL: svc.URL, MetricsURL: svc.MetricsURL}, true
		if len(running.Services) > 1 {
			b, err := lab.Balance(running.Services)
			if err != nil {
				return running, err
			}
			defer b.Close()
			ep.URL = b.URL
			for _, other := range running.Services[1:] {
				more = append(more, other.MetricsURL)
			}
		}
	}
	if !ok {
		return running, fmt.Errorf("no endpoint for target %s (-target %s=URL)", name, name)
	}
	slo, err := report.ParseSLO(sloOf(s, p.Name, name))
	if err != nil {
		return running, err
	}
	var out *outage
	if p.DBStop != nil && be != nil && be.cluster != nil {
		out = startOutage(ctx, be, *p.DBStop, name, p.Name, ep.URL)
	}
	run, err := measure.Run(ctx, measure.Target{Name: name, MetricsURL: ep.MetricsURL, MoreMetrics: more}, configOf(p, ep.URL),
		measure.Options{ScrapeInterval: cmp.Or(p.Load.Scrape.D(), r.Scrape, DefaultScrape), SLO: slo})
	if out != nil {
		o := out.finish(ctx)
		pr.Outages = append(pr.Outages, o)
		fmt.Fprintf(r.Log, "-- %s %s: keyed orders %s; missing %d, twice %d, stored despite the answer %d\n",
			p.Name, name, o.Answers, o.Missing, o.Duplicates, o.Stored)
	}
	if run.Name != "" {
		pr.Loadtest.Runs = append(pr.Loadtest.Runs, run)
		fmt.Fprintf(r.Log, "-- %s %s: %.0f req/s, %d ok, %d rejected, %d errors in %s\n",
			p.Name, name, run.Throughput, run.Succeeded, run.Rejected, run.Errors, report.FormatSeconds(run.ElapsedSeconds))
	}
	if err != nil {
		return running, fmt.Errorf("%s: %w", name, err)
	}
	return running, nil
}

// checkConnections waits (at most a minute) until Postgres can give one
// service its pool, and fails when it cannot: starved of connections a
// service answers 500s, and the figures would measure the shared database,
// not the model. Phases that never touch the pool need one connection
// (readiness) and a spare.
func checkConnections(ctx context.Context, adminURL string, s Scenario, log io.Writer) error {
	need := 0
	for _, p := range s.Phases {
		if p.Tasks != nil {
			continue
		}
		pool := 0
		if u, err := url.Parse(p.Request.Path); err == nil && (u.Path == "/orders" || u.Path == "/work/db") {
			env := merged(s.Env, p.Env)
			if pool, err = strconv.Atoi(cmp.Or(env["DB_MAX_CONNS"], "20")); err != nil {
				return fmt.Errorf("DB_MAX_CONNS %q: %w", env["DB_MAX_CONNS"], err)
			}
		}
		need = max(need, pool+2)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		free, err := pgdb.FreeConnections(ctx, adminURL)
		if err != nil {
			return err
		}
		if free >= need {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres has %d free connections and a service of %s needs %d: "+
				"stop other users of the server (make run, tests) or raise max_connections", free, s.Name, need)
		}
		fmt.Fprintf(log, "   waiting for Postgres connections: %d free, %d needed\n", free, need)
		if !measure.Sleep(ctx, 5*time.Second) {
			return ctx.Err()
		}
	}
}

// configOf turns a phase into a loadtest configuration against base: what
// the phase's load leaves out (or sets to 0) keeps attack.Defaults.
func configOf(p Phase, base string) attack.Config {
	l := p.Load
	cfg := attack.Defaults(attack.Mode(l.Mode))
	cfg.Target.Method = cmp.Or(p.Request.Method, cfg.Target.Method)
	cfg.Target.URL = strings.TrimRight(base, "/") + p.Request.Path
	cfg.Target.Body = attack.BodyFor(cfg.Target.Method)
	cfg.Concurrency, cfg.Requests, cfg.Duration = l.Concurrency, l.Requests, l.Duration.D()
	cfg.Timeout = cmp.Or(l.Timeout.D(), cfg.Timeout)
	cfg.Retries = cmp.Or(l.Retries, cfg.Retries)
	cfg.Retry = cmp.Or(attack.RetryPolicy(l.Retry), cfg.Retry)
	cfg.RetryMaxWait = cmp.Or(l.RetryMaxWait.D(), cfg.RetryMaxWait)
	if cfg.Mode == attack.ModeBurst && l.Warmup != nil {
		cfg.Warmup = *l.Warmup
	}
	if cfg.Mode == attack.ModeOpen {
		cfg.Pacer = attack.NewPacer(l.Rate, l.RampFrom, l.Ramp.D())
	}
	return cfg
}

// sloOf joins the SLO terms of the expectations that apply to target in phase.
func sloOf(s Scenario, phase, target string) string {
	var terms []string
	for _, e := range s.Expect {
		if e.SLO != "" && (e.Target == "" || e.Target == target) && (e.Phase == "" || e.Phase == phase) {
			terms = append(terms, e.SLO)
		}
	}
	return strings.Join(terms, ",")
}

// runTasks runs an in-process tasks phase.
func runTasks(t Tasks) *TasksResult {
	job := tasks.Sleep(t.Sleep.D())
	if t.Rounds > 0 {
		job = tasks.SHA256Chain(t.Rounds)
	}
	var st tasks.Stats
	if t.Workers == 0 {
		st = tasks.Goroutines(t.Jobs, job)
	} else {
		st = tasks.Pool(t.Workers, t.Jobs, job) // -1: GOMAXPROCS
	}
	tr := &TasksResult{Stats: st, ElapsedSeconds: st.Elapsed.Seconds()}
	if t.ScaleTo > t.Jobs {
		tr.ScaledSeconds = tr.ElapsedSeconds * float64(t.ScaleTo) / float64(t.Jobs)
	}
	if t.Sleep > 0 {
		rounds := 1.0
		if st.Workers > 0 {
			rounds = math.Ceil(float64(max(t.ScaleTo, t.Jobs)) / float64(st.Workers))
		}
		tr.BoundSeconds = rounds * t.Sleep.D().Seconds()
	}
	return tr
}

func merged(a, b map[string]string) map[string]string {
	m := maps.Clone(a)
	if m == nil {
		m = map[string]string{}
	}
	maps.Copy(m, b)
	return m
}

func envString(env map[string]string) string {
	if len(env) == 0 {
		return "the defaults"
	}
	parts := make([]string, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		parts = append(parts, k+"="+env[k])
	}
	return strings.Join(parts, " ")
}

var notWord = regexp.MustCompile(`[^a-z0-9]+`)

// dbNameOf is the scenario's database: orderlab_scn_<name>.
func dbNameOf(name string) string {
	return "orderlab_scn_" + strings.Trim(notWord.ReplaceAllString(strings.ToLower(name), "_"), "_")
}
