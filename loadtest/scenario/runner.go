package scenario

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/orderlab/orderlab/loadtest/annotate"
	"github.com/orderlab/orderlab/loadtest/lab"
	"github.com/orderlab/orderlab/loadtest/measure"
	"github.com/orderlab/orderlab/loadtest/report"
)

// Endpoint is a running service the runner did not start (the compose lab).
type Endpoint struct {
	URL        string // API base, e.g. http://127.0.0.1:8081
	MetricsURL string // its /metrics
	// AdminURL is its admin listener (GET/PATCH /knobs), e.g.
	// http://127.0.0.1:9091; empty: a phase that sets knobs fails.
	AdminURL string
}

// Runner runs scenarios and writes their results.
type Runner struct {
	// BinDir holds the built services; the runner starts them on free
	// loopback ports with each phase's env, against a database it creates
	// on DatabaseURL's server and drops afterwards.
	BinDir      string
	DatabaseURL string
	// Endpoints, when set, are used instead (the running lab): the
	// services are not started; each phase's env is applied through their
	// knob API with Token (their ADMIN_TOKEN) and every knob changed is put
	// back at the end, also on a failure, Ctrl-C or a panic
	// (docs/lab-scenarios.md). A scenario that needs what running services
	// cannot give (InLab) is refused.
	Endpoints map[string]Endpoint
	Token     string
	// AllowRemote lets Endpoints be outside the loopback interface (the
	// compose network's service names).
	AllowRemote bool
	// Annotate, when set, marks each phase on the Grafana board; Board is
	// the board's URL, which the result quotes for the run's time range.
	Annotate *annotate.Client
	Board    string
	// DBProxy, when set, is the running lab's database fault proxy, which
	// stages db_latency and db_stop (an outage of the proxy) there.
	DBProxy *LabProxy
	Out     string // results go to Out/<scenario>/<timestamp>.{json,md,html}
	Quick   bool   // shorten every phase to seconds (see Quick)
	// Count runs the whole scenario this many times over (default 1), so
	// that its tables quote the median and the range of every figure.
	Count int
	Log   io.Writer
	// Pause between targets (default 2 s, quick 200 ms); Scrape is the
	// metrics interval (default DefaultScrape) of the phases that set none.
	Pause, Scrape time.Duration
	// Progress, when set, is told as each phase starts and ends (the front
	// page shows the phase and the time left in it). It runs on the
	// runner's goroutine: it must return quickly.
	Progress func(PhaseEvent)

	afterKnobs func(phase string) // tests: called once a phase's knobs show
}

// PhaseEvent is a phase starting (Ended false) or ending.
type PhaseEvent struct {
	Phase      string
	Index, Of  int // the phase's place, from 0, among Of
	Repetition int // from 0
	Ended      bool
	// Planned is the phase's load over every target with the pauses between
	// them (Phase.Planned); 0 when not known ahead (a burst, a request count).
	Planned time.Duration
	Err     error // Ended: why the phase stopped the run, if it did
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
	if r.Endpoints != nil {
		if ok, why := InLab(s); !ok {
			return nil, Files{}, fmt.Errorf("%s cannot run against running services: it %s (docs/lab-scenarios.md)", s.Name, why)
		}
	}
	pause := r.Pause
	if pause <= 0 {
		pause = PauseOf(r.Quick)
	}
	res := &Result{Schema: Schema, Scenario: s, Quick: r.Quick, Local: r.Endpoints == nil, Count: max(1, r.Count),
		StartedAt: time.Now().UTC(), Host: report.New("", nil).Host}
	stamp := res.StartedAt.Format("20060102T150405Z")
	dir := filepath.Join(r.Out, s.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, Files{}, err
	}
	fmt.Fprintf(r.Log, "== %s: %s\n", Label(s), s.Title)
	runErr := r.repeat(ctx, s, res, pause, filepath.Join(dir, stamp+"-logs"))
	res.Elapsed = time.Since(res.StartedAt).Round(time.Millisecond).Seconds()
	if r.Board != "" {
		res.Board = boardRange(r.Board, res.StartedAt, time.Now())
	}
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
	var live *liveKnobs
	if r.Endpoints != nil {
		live = newLiveKnobs(r.Endpoints, r.Token, r.Log)
		// Deferred, so that it runs on a failed phase, on Ctrl-C (ctx
		// canceled: the restore runs without that cancel) and on a panic.
		defer func() { err = errors.Join(err, live.restore(context.WithoutCancel(ctx))) }()
		if needsProxy(s) {
			if err := r.checkProxy(ctx, s, live); err != nil {
				return err
			}
			defer func() {
				if cerr := r.setProxyLatency(context.WithoutCancel(ctx), Phase{}); cerr != nil {
					err = errors.Join(err, fmt.Errorf("clearing the database proxy's latency: %w", cerr))
				}
			}()
		}
	}
	for rep := range res.Count {
		if res.Count > 1 {
			fmt.Fprintf(r.Log, "== repetition %d of %d\n", rep+1, res.Count)
		}
		if err := r.phases(ctx, s, res, rep, pause, &be, live, logDir); err != nil {
			return err
		}
	}
	return nil
}

// phases runs every phase once (repetition rep), appending to res.Phases.
// A service started for a phase that the next one continues is kept
// running for it.
func (r *Runner) phases(ctx context.Context, s Scenario, res *Result, rep int, pause time.Duration, be **backend,
	live *liveKnobs, logDir string) error {
	kept := map[string]*lab.Lab{}
	defer func() {
		for name, running := range kept {
			r.stop(name, running)
		}
	}()
	for i := range s.Phases {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := r.phase(ctx, s, res, rep, i, pause, be, live, logDir, kept); err != nil {
			return err
		}
	}
	return nil
}

// phase runs phase i of repetition rep, told to Progress.
func (r *Runner) phase(ctx context.Context, s Scenario, res *Result, rep, i int, pause time.Duration, be **backend,
	live *liveKnobs, logDir string, kept map[string]*lab.Lab) (err error) {
	p := s.Phases[i]
	// The phase starts for Progress once its knobs show, when its load is
	// about to begin.
	ev, began := PhaseEvent{Phase: p.Name, Index: i, Of: len(s.Phases), Repetition: rep, Planned: p.Planned(len(s.Targets), pause)}, false
	begin := func() {
		if r.Progress != nil {
			r.Progress(ev)
			began = true
		}
	}
	defer func() {
		if began {
			ev.Ended, ev.Err = true, err
			r.Progress(ev)
		}
	}()
	if rep == 0 {
		pr := PhaseResult{Name: p.Name}
		if p.Bound != nil {
			pr.BoundRPS = p.Bound.RPS()
		}
		res.Phases = append(res.Phases, pr)
	}
	pr := &res.Phases[i]
	if p.Tasks != nil {
		begin()
		t := runTasks(*p.Tasks)
		pr.addTasks(t)
		fmt.Fprintf(r.Log, "-- %s: %d jobs in %s\n", p.Name, t.Jobs, report.FormatSeconds(t.ElapsedSeconds))
		return nil
	}
	pr.Env = envOf(s, i)
	if r.Endpoints == nil && *be == nil {
		var err error
		if *be, err = newBackend(ctx, r.DatabaseURL, s, r.Log); err != nil {
			return err
		}
	}
	if live != nil && (!p.Continue || len(p.Env) > 0) {
		if err := live.apply(ctx, s.Targets, pr.Env); err != nil {
			return fmt.Errorf("phase %s: %w", p.Name, err)
		}
	}
	if r.afterKnobs != nil {
		r.afterKnobs(p.Name)
	}
	begin()
	mark := r.annotate(ctx, s, p)
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
			r.endMark(ctx, mark)
			return fmt.Errorf("phase %s: %w", p.Name, err)
		}
	}
	r.endMark(ctx, mark)
	return nil
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
				Database: be.urlFor(p), LogDir: logDir, Replicas: replicas, AdminToken: localToken})
			if err != nil {
				return nil, err
			}
		} else if p.Continue && len(p.Env) > 0 {
			if err := r.setKnobs(ctx, name, running, p.Env); err != nil {
				return running, err
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
	if r.Endpoints != nil && needsProxy(s) {
		if err := r.setProxyLatency(ctx, p); err != nil {
			return running, err
		}
	}
	text, err := sloOf(s, r.Quick, p, name)
	if err != nil {
		return running, err
	}
	slo, err := report.ParseSLO(text)
	if err != nil {
		return running, err
	}
	var out *outage
	switch {
	case p.DBStop == nil:
	case be != nil && be.cluster != nil:
		out = startOutage(ctx, localOutage(be, p.DBStop.For.D()), *p.DBStop, name, p.Name, ep.URL)
	case r.Endpoints != nil && r.DBProxy != nil:
		out = startOutage(ctx, r.labOutage(p.DBStop.For.D()), *p.DBStop, name, p.Name, ep.URL)
	}
	cfg := configOf(p, ep.URL)
	cfg.AllowRemote = r.AllowRemote
	watch := be.watchTarget(ctx, r.DatabaseURL, name, p.PgBouncer)
	run, err := measure.Run(ctx, measure.Target{Name: name, MetricsURL: ep.MetricsURL, MoreMetrics: more}, cfg,
		measure.Options{ScrapeInterval: cmp.Or(p.Load.Scrape.D(), r.Scrape, DefaultScrape), SLO: slo})
	pr.addView(ctx, watch, r.Log)
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
