// Package runner runs the scenarios of lab/scenario: every phase against every
// target with package measure, on the services its caller's setup.Mode
// readies (started locally, or the running lab's), with what Postgres and
// PgBouncer showed of each run (package observe), and writes the results
// (package render).
package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/orderlab/orderlab/lab/scenario"
	"github.com/orderlab/orderlab/lab/scenario/observe"
	"github.com/orderlab/orderlab/lab/scenario/render"
	"github.com/orderlab/orderlab/lab/scenario/result"
	"github.com/orderlab/orderlab/lab/scenario/setup"
	"github.com/orderlab/orderlab/lab/tasks"
	"github.com/orderlab/orderlab/loadtest/annotate"
	"github.com/orderlab/orderlab/loadtest/measure"
	"github.com/orderlab/orderlab/loadtest/report"
)

// Runner runs scenarios and writes their results.
type Runner struct {
	// Mode is where the scenarios run: setup.Local (services the runner
	// starts for each phase) or *setup.Lab (running services, the lab).
	Mode setup.Mode
	// Annotate, when set, marks each phase on the Grafana board; Board is
	// the board's URL, which the result quotes for the run's time range.
	Annotate *annotate.Client
	Board    string
	Out      string // results go to Out/<scenario>/<timestamp>.{json,md,html}
	Quick    bool   // shorten every phase to seconds (scenario.Quick)
	// Count runs the whole scenario this many times over (default 1), so
	// that its tables quote the median and the range of every figure.
	Count int
	Log   io.Writer
	// Pause between targets (default 2 s, quick 200 ms); Scrape is the
	// metrics interval (default scenario.DefaultScrape) of the phases that set none.
	Pause, Scrape time.Duration
	// Prometheus, when set, is asked right after each target's run whether
	// a pitfall alert fires on the target (package diagnose), in a run on
	// running services (the lab's Prometheus does not scrape the services
	// a local run starts). That, or a run that misses an expectation,
	// keeps the target's flight recorder window beside the report
	// (result.Snapshot).
	Prometheus string
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
	// BoundRPS is the phase's Little's-law bound at the size that runs,
	// quick or full; 0 when it states none.
	BoundRPS float64
	Err      error // Ended: why the phase stopped the run, if it did
}

// Run runs s (Count times) and writes its results. A phase that could not
// run stops the scenario; the results so far are still written.
func (r *Runner) Run(ctx context.Context, s scenario.Scenario) (*result.Result, render.Files, error) {
	if r.Quick {
		s = scenario.Quick(s)
	}
	if r.Log == nil {
		r.Log = io.Discard
	}
	if r.Mode == nil {
		return nil, render.Files{}, errors.New("scenario runner: no Mode (setup.Local or *setup.Lab)")
	}
	if err := r.Mode.Check(s); err != nil {
		return nil, render.Files{}, err
	}
	pause := r.Pause
	if pause <= 0 {
		pause = scenario.PauseOf(r.Quick)
	}
	res := &result.Result{Schema: result.Schema, Scenario: s, Quick: r.Quick, Local: r.Mode.Local(), Count: max(1, r.Count),
		StartedAt: time.Now().UTC(), Host: report.New("", nil).Host}
	stamp := res.StartedAt.Format("20060102T150405Z")
	dir := filepath.Join(r.Out, s.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, render.Files{}, err
	}
	fmt.Fprintf(r.Log, "== %s: %s\n", scenario.Label(s), s.Title)
	prom := r.Prometheus
	if r.Mode.Local() {
		prom = ""
	}
	ev := newEvidence(dir, stamp, prom, r.Log)
	runErr := r.repeat(ctx, s, res, pause, filepath.Join(dir, stamp+"-logs"), ev)
	res.Elapsed = time.Since(res.StartedAt).Round(time.Millisecond).Seconds()
	if r.Board != "" {
		res.Board = boardRange(r.Board, res.StartedAt, time.Now())
	}
	files, err := render.Write(dir, stamp, res)
	return res, files, errors.Join(runErr, err)
}

// repeat runs every phase of s res.Count times over, on one setup that
// puts everything back at the end. Each repetition appends its runs
// to the phases' results, so that a table can quote the median and the
// range.
func (r *Runner) repeat(ctx context.Context, s scenario.Scenario, res *result.Result, pause time.Duration, logDir string, ev *evidence) (err error) {
	st, err := r.Mode.Setup(ctx, s, logDir, r.Log)
	if err != nil {
		return err
	}
	// Deferred, so that it runs on a failed phase, on Ctrl-C (ctx
	// canceled: close runs without that cancel) and on a panic.
	defer func() { err = errors.Join(err, st.Close(context.WithoutCancel(ctx))) }()
	for rep := range res.Count {
		if res.Count > 1 {
			fmt.Fprintf(r.Log, "== repetition %d of %d\n", rep+1, res.Count)
		}
		for i := range s.Phases {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := r.phase(ctx, st, s, res, rep, i, pause, ev); err != nil {
				return err
			}
		}
	}
	return nil
}

// phase runs phase i of repetition rep, told to Progress; kept looks at
// each target's run.
func (r *Runner) phase(ctx context.Context, st setup.Setup, s scenario.Scenario, res *result.Result, rep, i int, pause time.Duration, kept *evidence) (err error) {
	p := s.Phases[i]
	// The phase starts for Progress once its knobs show, when its load is
	// about to begin.
	ev, began := PhaseEvent{Phase: p.Name, Index: i, Of: len(s.Phases), Repetition: rep, Planned: p.Planned(len(s.Targets), pause)}, false
	if p.Bound != nil {
		ev.BoundRPS = p.Bound.RPS()
	}
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
		res.Phases = append(res.Phases, result.PhaseResult{Name: p.Name, BoundRPS: ev.BoundRPS})
	}
	pr := &res.Phases[i]
	if p.Tasks != nil {
		begin()
		t := runTasks(*p.Tasks)
		pr.AddTasks(t)
		fmt.Fprintf(r.Log, "-- %s: %d jobs in %s\n", p.Name, t.Jobs, report.FormatSeconds(t.ElapsedSeconds))
		return nil
	}
	pr.Env = scenario.EnvOf(s, i)
	if err := st.Phase(ctx, i, pr.Env); err != nil {
		return fmt.Errorf("phase %s: %w", p.Name, err)
	}
	if r.afterKnobs != nil {
		r.afterKnobs(p.Name)
	}
	begin()
	mark := r.annotate(ctx, s, p)
	defer r.endMark(ctx, mark)
	if pr.Loadtest == nil {
		pr.Loadtest = report.New(p.Load.Mode, []string{"scenario", s.Name, p.Name})
	}
	for j, name := range s.Targets {
		if j > 0 && !measure.Sleep(ctx, pause) {
			break
		}
		if err := r.target(ctx, st, s, res, rep, i, name, kept); err != nil {
			return fmt.Errorf("phase %s: %w", p.Name, err)
		}
	}
	return nil
}

// target runs phase i against one service, readied by st, and appends the
// run to the phase's result; ev looks at the run before anything else
// happens to the service (result.Snapshot).
func (r *Runner) target(ctx context.Context, st setup.Setup, s scenario.Scenario, res *result.Result, rep, i int, name string, ev *evidence) (err error) {
	p, pr := s.Phases[i], &res.Phases[i]
	tg, err := st.Target(ctx, i, name)
	if err != nil {
		return err
	}
	defer func() { tg.Done(err == nil) }()
	text, err := scenario.SLOOf(s, r.Quick, p, name)
	if err != nil {
		return err
	}
	slo, err := report.ParseSLO(text)
	if err != nil {
		return err
	}
	var out *setup.RunningOutage
	if p.DBStop != nil && tg.Outage != nil {
		out = tg.Outage.Start(ctx, *p.DBStop, name, p.Name, tg.URL)
	}
	cfg := scenario.ConfigOf(p, tg.URL)
	cfg.AllowRemote = tg.AllowRemote
	watch := st.Watch(ctx, i, name)
	run, err := measure.Run(ctx, measure.Target{Name: name, MetricsURL: tg.Metrics, MoreMetrics: tg.More}, cfg,
		measure.Options{ScrapeInterval: cmp.Or(p.Load.Scrape.D(), r.Scrape, scenario.DefaultScrape), SLO: slo})
	if run.Name != "" {
		pr.Loadtest.Runs = append(pr.Loadtest.Runs, run)
		fmt.Fprintf(r.Log, "-- %s %s: %.0f req/s, %d ok, %d rejected, %d errors in %s\n",
			p.Name, name, run.Throughput, run.Succeeded, run.Rejected, run.Errors, report.FormatSeconds(run.ElapsedSeconds))
	}
	// The Postgres view first: its sampler stops here, before the
	// snapshot's GET, which would add idle samples to the run's.
	addView(ctx, pr, watch, r.Log)
	if run.Name != "" && ctx.Err() == nil {
		ev.after(ctx, res, i, rep, run, tg.Admin)
	}
	if out != nil {
		o := out.Finish(ctx)
		pr.Outages = append(pr.Outages, o)
		fmt.Fprintf(r.Log, "-- %s %s: keyed orders %s; missing %d, twice %d, stored despite the answer %d\n",
			p.Name, name, o.Answers, o.Missing, o.Duplicates, o.Stored)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// addView records w's view of a target's run in p and says it on log
// (nothing for a nil w).
func addView(ctx context.Context, p *result.PhaseResult, w *observe.PostgresWatch, log io.Writer) {
	if w == nil {
		return
	}
	v := w.Stop(ctx)
	p.Postgres = append(p.Postgres, v)
	fmt.Fprintf(log, "-- %s %s: Postgres saw %s\n", p.Name, v.Target, v)
	if w.Pooler != nil {
		pv := w.Pooler.Stop(ctx)
		p.PgBouncer = append(p.PgBouncer, pv)
		fmt.Fprintf(log, "-- %s %s: PgBouncer saw %s\n", p.Name, pv.Target, pv)
	}
}

// runTasks runs an in-process tasks phase.
func runTasks(t scenario.Tasks) *result.TasksResult {
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
	tr := &result.TasksResult{Stats: st, ElapsedSeconds: st.Elapsed.Seconds()}
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
