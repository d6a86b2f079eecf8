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
