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
	// BoundRPS is the phase's Little's-law bound at the size that runs,
	// quick or full; 0 when it states none.
	BoundRPS float64
	Err      error // Ended: why the phase stopped the run, if it did
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

// repeat runs every phase of s res.Count times over, staged by one stager
// that puts everything back at the end. Each repetition appends its runs
// to the phases' results, so that a table can quote the median and the
// range.
func (r *Runner) repeat(ctx context.Context, s Scenario, res *Result, pause time.Duration, logDir string) (err error) {
	st, err := r.stager(ctx, s, logDir)
	if err != nil {
		return err
	}
	// Deferred, so that it runs on a failed phase, on Ctrl-C (ctx
	// canceled: close runs without that cancel) and on a panic.
	defer func() { err = errors.Join(err, st.close(context.WithoutCancel(ctx))) }()
	for rep := range res.Count {
		if res.Count > 1 {
			fmt.Fprintf(r.Log, "== repetition %d of %d\n", rep+1, res.Count)
		}
		for i := range s.Phases {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := r.phase(ctx, st, s, res, rep, i, pause); err != nil {
				return err
			}
		}
	}
	return nil
}

// phase runs phase i of repetition rep, told to Progress.
func (r *Runner) phase(ctx context.Context, st stager, s Scenario, res *Result, rep, i int, pause time.Duration) (err error) {
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
		res.Phases = append(res.Phases, PhaseResult{Name: p.Name, BoundRPS: ev.BoundRPS})
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
	if err := st.phase(ctx, i, pr.Env); err != nil {
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
		if err := r.target(ctx, st, s, i, name, pr); err != nil {
			return fmt.Errorf("phase %s: %w", p.Name, err)
		}
	}
	return nil
}

// target runs phase i against one service, staged by st, and appends the
// run to pr.
func (r *Runner) target(ctx context.Context, st stager, s Scenario, i int, name string, pr *PhaseResult) (err error) {
	p := s.Phases[i]
	tg, err := st.target(ctx, i, name)
	if err != nil {
		return err
	}
	defer func() { tg.done(err == nil) }()
	text, err := sloOf(s, r.Quick, p, name)
	if err != nil {
		return err
	}
	slo, err := report.ParseSLO(text)
	if err != nil {
		return err
	}
	var out *outage
	if p.DBStop != nil && tg.outage != nil {
		out = startOutage(ctx, *tg.outage, *p.DBStop, name, p.Name, tg.url)
	}
	cfg := configOf(p, tg.url)
	cfg.AllowRemote = r.AllowRemote
	watch := st.watch(ctx, i, name)
	run, err := measure.Run(ctx, measure.Target{Name: name, MetricsURL: tg.metrics, MoreMetrics: tg.more}, cfg,
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
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}
