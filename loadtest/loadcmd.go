package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/orderlab/orderlab/internal/cli"
	"github.com/orderlab/orderlab/loadtest/annotate"
	"github.com/orderlab/orderlab/loadtest/attack"
	"github.com/orderlab/orderlab/loadtest/htmlreport"
	"github.com/orderlab/orderlab/loadtest/measure"
	"github.com/orderlab/orderlab/loadtest/report"
)

// loadPlan is a parsed load command (burst, closed, open or compare): the
// same attack against each target in turn, what to observe, and where the
// results go. parseLoad fills it from the flags, the arguments and the
// environment; execute runs it and reads nothing else.
type loadPlan struct {
	mode    string   // the subcommand, for messages: burst, closed, open or compare
	args    []string // the command line, for the report
	attack  attack.Config
	targets []target
	slo     report.SLO
	scrape  time.Duration // between metric scrapes
	pause   time.Duration // between targets
	// grafana marks each run on the lab's board (GRAFANA_URL, docs/lab.md);
	// nil: no marks.
	grafana    *annotate.Client
	out        output
	cpuProfile string // "": no profile
}

// output says where the results go.
type output struct {
	json     string // the JSON report's file; "-": stdout, instead of the tables
	markdown bool   // a Markdown table instead of the human output
	summary  bool   // one table of all targets (compare) instead of a detail per run
	html     string // also the summary table as an HTML page in this file
}

// parseLoad reads mode's command line and environment into a plan.
func parseLoad(mode string, args []string, getenv func(string) string, stderr io.Writer) (*loadPlan, error) {
	fs, f := newLoadFlags(mode)
	fs.SetOutput(stderr)
	pos, set, err := cli.ParseInterleaved(fs, args)
	if err != nil {
		return nil, err
	}
	cfg, err := f.attackConfig(set)
	if err != nil {
		return nil, err
	}
	slo, err := report.ParseSLO(f.slo)
	if err != nil {
		return nil, cli.Usagef("slo", "%v", err)
	}
	if f.scrape <= 0 {
		return nil, cli.Usagef("scrape", "must be positive")
	}
	if f.pause < 0 {
		return nil, cli.Usagef("pause", "must not be negative")
	}
	if f.jsonOut == "-" && f.md {
		return nil, cli.Usagef("md", "cannot share stdout with -json -")
	}
	targets, err := f.targets(pos)
	if err != nil {
		return nil, err
	}
	grafana, err := annotate.New(getenv("GRAFANA_URL"))
	if err != nil {
		return nil, err
	}
	return &loadPlan{
		mode: mode, args: append([]string{mode}, args...),
		attack: cfg, targets: targets, slo: slo, scrape: f.scrape, pause: f.pause, grafana: grafana,
		out:        output{json: f.jsonOut, markdown: f.md, summary: f.compare, html: f.html},
		cpuProfile: f.cpuProfile,
	}, nil
}

// execute runs the plan, writes the results and returns the exit code.
func (p *loadPlan) execute(ctx context.Context, stdout, stderr io.Writer) int {
	rep := report.New(string(p.attack.Mode), p.args)
	code := cli.ExitOK
	if p.cpuProfile != "" {
		stop, err := startCPUProfile(p.cpuProfile)
		if err != nil {
			fmt.Fprintf(stderr, "loadtest %s: -cpuprofile: %v\n", p.mode, err)
			return cli.ExitFail
		}
		defer stop()
	}
	opt := measure.Options{ScrapeInterval: p.scrape, SLO: p.slo, Annotate: p.grafana, Log: stderr}
	if cli.IsTerminal(stderr) {
		opt.Progress = stderr
	}
	for i, t := range p.targets {
		if i > 0 && !measure.Sleep(ctx, p.pause) {
			break
		}
		cfg := p.attack
		cfg.Target.URL = t.url
		run, err := measure.Run(ctx, measure.Target{Name: t.name, MetricsURL: t.metrics}, cfg, opt)
		if err != nil && run.Name == "" { // the run could not start
			fmt.Fprintf(stderr, "loadtest %s: %s: %v\n", p.mode, t.name, err)
			return cli.ExitFail
		}
		rep.Runs = append(rep.Runs, run)
		if ctx.Err() != nil {
			fmt.Fprintf(stderr, "loadtest %s: interrupted; the results below are partial\n", p.mode)
			code = cli.ExitFail
			break
		}
	}
	if err := p.out.write(rep, stdout); err != nil {
		fmt.Fprintf(stderr, "loadtest %s: %v\n", p.mode, err)
		return cli.ExitFail
	}
	for _, r := range rep.Runs {
		if r.Answered == 0 {
			fmt.Fprintf(stderr, "loadtest %s: %s: no request was answered\n", p.mode, r.Name)
			code = cli.ExitFail
		}
		for _, e := range r.SLO {
			if !e.Met {
				fmt.Fprintf(stderr, "loadtest %s: SLO missed: %s: %s (actual %s)\n", p.mode, r.Name, e.Bound, e.Actual)
				code = cli.ExitFail
			}
		}
	}
	return code
}

// write sends the report where o says.
func (o output) write(rep *report.Report, stdout io.Writer) error {
	switch {
	case o.json == "-":
		if err := report.Write(stdout, rep); err != nil {
			return err
		}
	case o.markdown:
		if err := report.WriteMarkdown(stdout, rep.Runs); err != nil {
			return err
		}
	case o.summary:
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
	if o.html != "" {
		if err := writeHTML(o.html, rep); err != nil {
			return fmt.Errorf("-html: %w", err)
		}
	}
	if o.json == "" || o.json == "-" {
		return nil
	}
	if err := writeJSON(o.json, rep); err != nil {
		return fmt.Errorf("-json: %w", err)
	}
	return nil
}

// writeJSON writes rep to path through a temporary file beside it, renamed
// into place, so that a reader waiting for path (the merge step of the
// sharded Kubernetes Job, docs/kubernetes.md) never reads half a report.
func writeJSON(path string, rep *report.Report) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	err = report.Write(f, rep)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}

// writeHTML writes rep's summary table, lateness included, and its
// warnings as an HTML page.
func writeHTML(path string, rep *report.Report) error {
	head, rows := report.Table(rep.Runs)
	page := htmlreport.Page{
		Title:    "loadtest " + rep.Mode,
		Subtitle: fmt.Sprintf("%s, %s/%s, %d CPUs, %s", rep.StartedAt.Format(time.RFC3339), rep.Host.OS, rep.Host.Arch, rep.Host.CPUs, strings.Join(rep.Args, " ")),
		Notes:    report.Warnings(rep.Runs),
		Sections: []htmlreport.Section{{Title: "Runs", Head: head, Rows: rows}},
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	err = htmlreport.Write(f, page)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
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
