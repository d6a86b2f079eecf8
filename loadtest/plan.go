package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/pprof"

	"github.com/orderlab/orderlab/loadtest/annotate"
	"github.com/orderlab/orderlab/loadtest/attack"
	"github.com/orderlab/orderlab/loadtest/measure"
	"github.com/orderlab/orderlab/loadtest/report"
)

// plan is a parsed command line: the same load for each target in turn.
type plan struct {
	cmd      *command
	cfg      attack.Config
	targets  []target
	slo      report.SLO
	progress io.Writer // live line; nil when stderr is not a terminal
}

// execute runs the plan, writes the results and returns the exit code.
func (p *plan) execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	rep := report.New(string(p.cfg.Mode), args)
	code := exitOK
	// GRAFANA_URL: mark each run on the lab's board (docs/lab.md).
	grafana, err := annotate.New(os.Getenv("GRAFANA_URL"))
	if err != nil {
		fmt.Fprintf(stderr, "loadtest %s: %v\n", p.cmd.mode, err)
		return exitUsage
	}
	if p.cmd.cpuProfile != "" {
		stop, err := startCPUProfile(p.cmd.cpuProfile)
		if err != nil {
			fmt.Fprintf(stderr, "loadtest %s: -cpuprofile: %v\n", p.cmd.mode, err)
			return exitFail
		}
		defer stop()
	}
	for i, t := range p.targets {
		if i > 0 && !measure.Sleep(ctx, p.cmd.pause) {
			break
		}
		cfg := p.cfg
		cfg.Target.URL = t.url
		run, err := measure.Run(ctx, measure.Target{Name: t.name, MetricsURL: t.metrics}, cfg,
			measure.Options{ScrapeInterval: p.cmd.scrape, Progress: p.progress, SLO: p.slo, Annotate: grafana, Log: stderr})
		if err != nil && run.Name == "" { // the run could not start
			fmt.Fprintf(stderr, "loadtest %s: %s: %v\n", p.cmd.mode, t.name, err)
			return exitFail
		}
		rep.Runs = append(rep.Runs, run)
		if ctx.Err() != nil {
			fmt.Fprintf(stderr, "loadtest %s: interrupted; the results below are partial\n", p.cmd.mode)
			code = exitFail
			break
		}
	}
	if err := p.write(rep, stdout); err != nil {
		fmt.Fprintf(stderr, "loadtest %s: %v\n", p.cmd.mode, err)
		return exitFail
	}
	for _, r := range rep.Runs {
		if r.Answered == 0 {
			fmt.Fprintf(stderr, "loadtest %s: %s: no request was answered\n", p.cmd.mode, r.Name)
			code = exitFail
		}
		for _, e := range r.SLO {
			if !e.Met {
				fmt.Fprintf(stderr, "loadtest %s: SLO missed: %s: %s (actual %s)\n", p.cmd.mode, r.Name, e.Bound, e.Actual)
				code = exitFail
			}
		}
	}
	return code
}

// write sends the report to the outputs the flags chose.
func (p *plan) write(rep *report.Report, stdout io.Writer) error {
	switch {
	case p.cmd.jsonOut == "-":
		return report.Write(stdout, rep)
	case p.cmd.md:
		if err := report.WriteMarkdown(stdout, rep.Runs); err != nil {
			return err
		}
	case p.cmd.compare:
		if err := report.WriteSummary(stdout, rep.Runs); err != nil {
			return err
		}
	default:
		for _, r := range rep.Runs {
			if err := report.WriteDetail(stdout, r); err != nil {
				return err
			}
		}
	}
	if p.cmd.jsonOut == "" {
		return nil
	}
	f, err := os.Create(p.cmd.jsonOut)
	if err != nil {
		return fmt.Errorf("-json: %w", err)
	}
	if err := report.Write(f, rep); err != nil {
		f.Close()
		return fmt.Errorf("-json: %w", err)
	}
	return f.Close()
}

// startCPUProfile profiles the process into path until the returned stop is called.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); _ = f.Close() }, nil
}
