// Package measure runs one load run against one target while watching the
// target's metrics, and returns the finished report.Run. It is the unit the
// loadtest command and the scenario runner build on.
package measure

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/orderlab/orderlab/loadtest/annotate"
	"github.com/orderlab/orderlab/loadtest/attack"
	"github.com/orderlab/orderlab/loadtest/report"
	"github.com/orderlab/orderlab/loadtest/scrape"
)

// Target is a service under load.
type Target struct {
	Name       string // a label for tables, e.g. "unbounded"
	MetricsURL string // its Prometheus endpoint; empty: no server-side figures
	// MoreMetrics are the endpoints of its other replicas, summed with it.
	MoreMetrics []string
}

// DefaultScrapeInterval is the time between metric scrapes when
// Options.ScrapeInterval is not set: the loadtest command's -scrape.
const DefaultScrapeInterval = time.Second

// DefaultPause is the pause between the runs of one command against
// several targets (see Sleep): the loadtest command's -pause and the
// scenario runner's.
const DefaultPause = 2 * time.Second

// Options tune what is observed besides the requests.
type Options struct {
	ScrapeInterval time.Duration // default DefaultScrapeInterval
	// Progress, when set, receives a live line once a second (see report.ShowProgress).
	Progress io.Writer
	SLO      report.SLO
	// Annotate, when set, marks the run on a Grafana board; a failure to
	// post is written to Log and does not fail the run.
	Annotate *annotate.Client
	Log      io.Writer
}

// Run attacks cfg.Target.URL as cfg says, scraping t.MetricsURL before,
// during and after, and returns the run. The baseline scrape and the start
// of the annotation are taken when the measured requests are released
// (attack.Config.OnRelease), so that a burst's warm-up round is not part of
// the server-side figures. When ctx is canceled the partial run is returned
// with ctx's error.
func Run(ctx context.Context, t Target, cfg attack.Config, opt Options) (report.Run, error) {
	if opt.ScrapeInterval <= 0 {
		opt.ScrapeInterval = DefaultScrapeInterval
	}
	var (
		watch   *scrape.Watcher
		mark    annotate.Run // zero until released; End ignores a zero Run
		release = cfg.OnRelease
	)
	cfg.OnRelease = func() {
		if t.MetricsURL != "" {
			watch = scrape.Watch(context.WithoutCancel(ctx), scrape.Scraper{URL: t.MetricsURL, Also: t.MoreMetrics}, opt.ScrapeInterval)
		}
		var err error
		mark, err = opt.Annotate.Start(ctx, fmt.Sprintf("loadtest %s %s", cfg.Mode, cfg.Target.URL), string(cfg.Mode), t.Name)
		if err != nil && opt.Log != nil {
			fmt.Fprintf(opt.Log, "loadtest: %v\n", err)
		}
		if release != nil {
			release()
		}
	}
	if err := checkFiles(ctx, t, cfg); err != nil {
		return report.Run{}, err
	}
	a, err := attack.New(cfg)
	if err != nil {
		return report.Run{}, err
	}
	var wg sync.WaitGroup
	progCtx, stopProgress := context.WithCancel(ctx)
	if opt.Progress != nil {
		wg.Go(func() { report.ShowProgress(progCtx, opt.Progress, t.Name, a.Progress, time.Second) })
	}
	cpu0 := cpuTime()
	res, runErr := a.Run(ctx)
	cpu := cpuTime() - cpu0
	stopProgress()
	wg.Wait()
	if err := opt.Annotate.End(context.WithoutCancel(ctx), mark); err != nil && opt.Log != nil {
		fmt.Fprintf(opt.Log, "loadtest: %v\n", err)
	}
	var series *scrape.Series
	if watch != nil {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		s := watch.Stop(stopCtx)
		cancel()
		series = &s
	}
	if res == nil {
		return report.Run{}, runErr
	}
	run, err := report.FromResult(cmp.Or(t.Name, cfg.Target.URL), cfg.Target.URL, cfg, res, series)
	if err != nil {
		return run, err
	}
	run.ClientCPUSeconds = cpu.Seconds()
	run.SLO = opt.SLO.Evaluate(run)
	return run, runErr
}

// ServerSpareFiles is how many open files a service needs besides its
// client connections: its pool's connections, listeners, log and trace
// exporters, scrapes.
const ServerSpareFiles = 128

// checkFiles refuses a run that opens more connections to t than t may hold
// open files (process_max_fds): past its limit a server's accept fails
// with "too many open files" and the run would measure that instead. A
// target that does not export its limit, or cannot be read, is not checked
// here (the run's scrapes say so).
func checkFiles(ctx context.Context, t Target, cfg attack.Config) error {
	if t.MetricsURL == "" {
		return nil
	}
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	x, err := scrape.Scraper{URL: t.MetricsURL, Also: t.MoreMetrics}.Scrape(sctx)
	if err != nil || x.MaxFiles <= 0 {
		return nil
	}
	// The connections are shared among the replicas.
	need := cfg.Concurrency/(1+len(t.MoreMetrics)) + ServerSpareFiles
	if int(x.MaxFiles) >= need {
		return nil
	}
	return fmt.Errorf("%s may hold %d open files (its process_max_fds), and this run opens %d connections to it, "+
		"which need about %d (one each, plus %d for its pool, listeners and exporters): raise the service's limit "+
		"(a shell: ulimit -n; Docker: dockerd --default-ulimit nofile=N:N, or ulimits: nofile for the service in a compose override) "+
		"or lower the concurrency",
		cmp.Or(t.Name, t.MetricsURL), int(x.MaxFiles), cfg.Concurrency, need, ServerSpareFiles)
}

// Sleep waits d unless ctx ends first, and reports whether d passed: the
// pause between the runs of the loadtest command and of the scenario runner.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
