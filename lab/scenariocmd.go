package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/orderlab/orderlab/internal/cli"
	"github.com/orderlab/orderlab/internal/pgdb"
	"github.com/orderlab/orderlab/lab/scenario"
	"github.com/orderlab/orderlab/lab/scenario/catalog"
	"github.com/orderlab/orderlab/lab/scenario/render"
	"github.com/orderlab/orderlab/lab/scenario/result"
	"github.com/orderlab/orderlab/lab/scenario/runner"
	"github.com/orderlab/orderlab/lab/scenario/setup"
	"github.com/orderlab/orderlab/loadtest/measure"
)

const scenarioUsage = `usage: lab scenario [flags] NAME|FILE.yaml... | all | -list | -render FILE.json

Runs scenarios of the catalog (lab/scenario/catalog) and writes
OUT/<scenario>/<timestamp>.{json,md,html}. By default it starts the three
services from -bin on free loopback ports, with each scenario's env, against
a database it creates on -db and drops afterwards.

With -lab it runs the scenario in the running compose lab instead: each
phase's knobs applied live through the services' PATCH /knobs (ADMIN_TOKEN),
each phase annotated on the board, every knob put back afterwards, a verdict
per expectation and the board's URL for the run (docs/lab-scenarios.md).
Inside compose (docker compose run --rm lab scenario NAME) -lab is the
default. -list says which scenarios the lab can run. With -target name=URL
(and -metrics name=URL, the admin listener's /metrics) it runs likewise
against other running services; with -lab, -target moves one of the lab's
services to other ports. A FILE.yaml is a scenario of your own, in the
catalog's format.

A target whose run misses an expectation, or on which a pitfall alert fires
then (-lab, or -target with -prometheus URL), leaves the last seconds of its execution
trace beside the report: OUT/<scenario>/<timestamp>-<phase>-<target>.trace,
which the report links (go tool trace FILE).

Exit status: 0 when every expectation was met (or is read from the table,
or not judged at quick size), 1 when one was missed, 2 when a scenario
could not run to its end (or on a usage error).

flags:
`

// scenarioPlan is a parsed scenario subcommand: one of three jobs, in this
// order of precedence.
type scenarioPlan struct {
	render string              // -render: draw a stored result again
	list   bool                // -list: print the catalog
	todo   []scenario.Scenario // run these with runner
	runner runner.Runner
	// Where runner's Mode runs them: on running services (lab), or, when
	// lab is nil, on services of its own (local).
	lab   *setup.Lab
	local setup.Local
}

// parseScenarioCmd reads the scenario subcommand's command line and
// environment (DATABASE_URL, the default of -db) into a plan.
func parseScenarioCmd(args []string, getenv func(string) string, stderr io.Writer) (*scenarioPlan, error) {
	fs := flag.NewFlagSet("lab scenario", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, scenarioUsage); fs.PrintDefaults() }
	p := &scenarioPlan{}
	r := &p.runner
	fs.BoolVar(&p.list, "list", false, "list the scenarios (and whether the lab can run them) and exit")
	lab := fs.Bool("lab", inCompose(getenv), "run the scenario in the running compose lab (the default inside compose)")
	fs.StringVar(&p.render, "render", "", "write the Markdown and HTML of a result `FILE.json` again, and exit")
	fs.BoolVar(&r.Quick, "quick", false, "shrink the scenario by one factor (largest pool / 5: pools, clients, rates, bounds) to a few seconds a phase")
	fs.IntVar(&r.Count, "count", 1, "run the scenario this many times over; the tables quote the median and the range")
	out := "results"
	if inCompose(getenv) {
		out = "/tmp/orderlab-results" // the container's; mount a directory here to keep them
	}
	fs.StringVar(&r.Out, "out", out, "results directory")
	fs.StringVar(&p.local.BinDir, "bin", "bin", "directory of the built services (make build)")
	fs.StringVar(&p.local.DatabaseURL, "db", cmp.Or(getenv("DATABASE_URL"), pgdb.DefaultURL),
		"Postgres URL of a user that may CREATE DATABASE (default $DATABASE_URL)")
	fs.DurationVar(&r.Pause, "pause", 0, fmt.Sprintf("pause between targets (default %s, quick 200ms)", measure.DefaultPause))
	targets, metrics := map[string]string{}, map[string]string{}
	fs.Func("target", "`name=URL` of a running service to use instead of starting one (repeatable)", cli.NameURLFlag(targets))
	fs.Func("metrics", "`name=URL` of a -target's Prometheus endpoint (repeatable)", cli.NameURLFlag(metrics))
	prom := fs.String("prometheus", "", "`URL` of the Prometheus asked whether a pitfall alert fires on a target after its run (-lab: the lab's)")
	proxy := addProxyFlags(fs)
	names, _, err := cli.ParseInterleaved(fs, args)
	if err != nil {
		return nil, err
	}
	if p.render != "" || p.list {
		return p, nil
	}
	if r.Count < 1 {
		return nil, cli.Usagef("count", "must be at least 1")
	}
	for name := range metrics {
		if targets[name] == "" {
			return nil, fmt.Errorf("-metrics %s without -target %s", name, name)
		}
	}
	if *lab {
		p.lab = &setup.Lab{}
		if err := useLab(r, p.lab, getenv); err != nil {
			return nil, err
		}
	} else if len(targets) > 0 {
		p.lab = &setup.Lab{Endpoints: map[string]setup.Endpoint{}, Token: getenv("ADMIN_TOKEN")}
	}
	// With -lab, -target moves a service of the lab to other ports (a lab
	// published elsewhere, or the e2e's).
	for name, u := range targets {
		if _, known := p.lab.Endpoints[name]; *lab && !known {
			return nil, cli.Usagef("target", "%s: the lab's services are %s", name, strings.Join(scenario.Services, ", "))
		}
		if *lab && metrics[name] == "" {
			return nil, cli.Usagef("metrics", "-lab -target %s=URL needs -metrics %s=URL (its admin listener's /metrics)", name, name)
		}
		p.lab.Endpoints[name] = setup.Endpoint{URL: u, MetricsURL: metrics[name], AdminURL: strings.TrimSuffix(metrics[name], "/metrics")}
	}
	if err := proxy.apply(p.lab); err != nil {
		return nil, err
	}
	if *prom != "" && p.lab == nil {
		// A local run's services are the runner's own, which no
		// Prometheus scrapes.
		return nil, cli.Usagef("prometheus", "asks about the lab's services: it needs -lab or -target")
	}
	r.Prometheus = cmp.Or(*prom, r.Prometheus)
	r.Mode = p.local
	if p.lab != nil {
		r.Mode = p.lab
	}
	if p.todo, err = pick(names); err != nil {
		return nil, err
	}
	return p, nil
}

// pick returns the scenarios named, or all of them for "all".
func pick(names []string) ([]scenario.Scenario, error) {
	if len(names) == 0 {
		return nil, errors.New("name a scenario, or all (lab scenario -list)")
	}
	if len(names) == 1 && names[0] == "all" {
		return catalog.All()
	}
	var out []scenario.Scenario
	for _, n := range names {
		s, err := pickOne(n)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// pickOne returns the catalog's scenario called name, or the scenario in
// the file name when it ends in .yaml: a variant of one of the catalog's
// (in the format of lab/scenario/catalog), which has no number.
func pickOne(name string) (scenario.Scenario, error) {
	if !strings.HasSuffix(name, ".yaml") {
		return catalog.Get(name)
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return scenario.Scenario{}, err
	}
	s, err := scenario.Parse(data)
	if err != nil {
		return s, fmt.Errorf("%s: %w", name, err)
	}
	return s, nil
}

// The scenario subcommand's exit codes besides cli.ExitOK and cli.ExitUsage.
const (
	exitMissed = 1 // an expectation was missed
	exitNotRun = 2 // a scenario could not run to its end
)

// left is the planned load of the scenarios todo, each as it runs.
func left(todo []scenario.Scenario, quick bool) time.Duration {
	var d time.Duration
	for _, s := range todo {
		if quick {
			s = scenario.Quick(s)
		}
		d += s.Planned(quick)
	}
	return d
}

// execute does the plan's job and returns the exit code.
func (p *scenarioPlan) execute(ctx context.Context, stdout, stderr io.Writer) int {
	switch {
	case p.render != "":
		files, err := render.Render(p.render)
		if err != nil {
			fmt.Fprintf(stderr, "lab scenario: %v\n", err)
			return cli.ExitFail
		}
		fmt.Fprintf(stdout, "wrote %s, %s\n", files.Markdown, files.HTML)
		return cli.ExitOK
	case p.list:
		all, err := catalog.All()
		if err != nil {
			fmt.Fprintf(stderr, "lab scenario: %v\n", err)
			return cli.ExitFail
		}
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "#\tscenario\ttitle\tin the lab")
		for _, s := range all {
			inLab := "yes"
			switch ok, why := scenario.InLab(s); {
			case !ok:
				inLab = "no: " + why
			case why != "":
				inLab = "yes, " + why
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", s.Number, s.Name, s.Title, inLab)
		}
		if err := tw.Flush(); err != nil {
			fmt.Fprintf(stderr, "lab scenario: %v\n", err)
			return cli.ExitFail
		}
		return cli.ExitOK
	}
	r := p.runner
	r.Log = stdout
	code := cli.ExitOK
	start := time.Now()
	for i, s := range p.todo {
		if len(p.todo) > 1 {
			fmt.Fprintf(stdout, "== scenario %d of %d: %s; planned load left, start-ups not counted: %s\n",
				i+1, len(p.todo), s.Name, left(p.todo[i:], r.Quick).Round(time.Second))
		}
		res, files, err := r.Run(ctx, s)
		if res != nil {
			if err := render.WriteMarkdown(stdout, res); err != nil {
				fmt.Fprintf(stderr, "lab scenario: %v\n", err)
			}
			fmt.Fprintf(stdout, "\nwrote %s, %s, %s (%.0f s)\n", files.JSON, files.Markdown, files.HTML, res.Elapsed)
			if res.Board != "" {
				fmt.Fprintf(stdout, "board: %s\n", res.Board)
			}
			fmt.Fprintln(stdout)
		}
		if res != nil && slices.ContainsFunc(result.VerdictsOf(res), func(v result.Verdict) bool { return v.Mark == result.VerdictMissed }) {
			code = max(code, exitMissed)
		}
		if err != nil {
			fmt.Fprintf(stderr, "lab scenario: %s: %v\n", s.Name, err)
			code = exitNotRun
		}
		if ctx.Err() != nil {
			break
		}
	}
	fmt.Fprintf(stdout, "%d scenario(s) in %s\n", len(p.todo), time.Since(start).Round(time.Second))
	return code
}
