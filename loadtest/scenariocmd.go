package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/orderlab/orderlab/loadtest/scenario"
	"github.com/orderlab/orderlab/loadtest/scenario/catalog"
)

const scenarioUsage = `usage: loadtest scenario [flags] NAME... | all | -list | -render FILE.json

Runs scenarios of the catalog (loadtest/scenario/catalog) and writes
OUT/<scenario>/<timestamp>.{json,md,html}. By default it starts the three
services from -bin on free loopback ports, with each scenario's env, against
a database it creates on -db and drops afterwards. With -target name=URL (and
-metrics name=URL) it uses running services instead, e.g. the compose lab.

flags:
`

// runScenario is the scenario mode: it parses its own flags, runs the named
// scenarios in order and returns the exit code.
func runScenario(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("loadtest scenario", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, scenarioUsage); fs.PrintDefaults() }
	r := &scenario.Runner{Log: stdout}
	list := fs.Bool("list", false, "list the scenarios and exit")
	render := fs.String("render", "", "write the Markdown and HTML of a result `FILE.json` again, and exit")
	fs.BoolVar(&r.Quick, "quick", false, "shorten every phase to a few seconds (smoke test; the figures mean nothing)")
	fs.StringVar(&r.Out, "out", "results", "results directory")
	fs.StringVar(&r.BinDir, "bin", "bin", "directory of the built services (make build)")
	fs.StringVar(&r.DatabaseURL, "db", cmp.Or(os.Getenv("DATABASE_URL"), "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"),
		"Postgres URL of a user that may CREATE DATABASE (default $DATABASE_URL)")
	fs.DurationVar(&r.Pause, "pause", 0, "pause between targets (default 2s, quick 200ms)")
	targets, metrics := map[string]string{}, map[string]string{}
	fs.Func("target", "`name=URL` of a running service to use instead of starting one (repeatable)", nameURLFlag(targets))
	fs.Func("metrics", "`name=URL` of a -target's Prometheus endpoint (repeatable)", nameURLFlag(metrics))
	names, err := parseInterleaved(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		return exitUsage
	}
	if *render != "" {
		files, err := scenario.Render(*render)
		if err != nil {
			fmt.Fprintf(stderr, "loadtest scenario: %v\n", err)
			return exitFail
		}
		fmt.Fprintf(stdout, "wrote %s, %s\n", files.Markdown, files.HTML)
		return exitOK
	}
	if *list {
		all, err := catalog.All()
		if err != nil {
			fmt.Fprintf(stderr, "loadtest scenario: %v\n", err)
			return exitFail
		}
		for _, s := range all {
			fmt.Fprintf(stdout, "%-24s %s\n", s.Name, s.Title)
		}
		return exitOK
	}
	for name := range metrics {
		if targets[name] == "" {
			fmt.Fprintf(stderr, "loadtest scenario: -metrics %s without -target %s\n", name, name)
			return exitUsage
		}
	}
	if len(targets) > 0 {
		r.Endpoints = map[string]scenario.Endpoint{}
		for name, u := range targets {
			r.Endpoints[name] = scenario.Endpoint{URL: u, MetricsURL: metrics[name]}
		}
	}
	todo, err := pick(names)
	if err != nil {
		fmt.Fprintf(stderr, "loadtest scenario: %v\n", err)
		return exitUsage
	}
	code := exitOK
	start := time.Now()
	for _, s := range todo {
		res, files, err := r.Run(ctx, s)
		if res != nil {
			if err := scenario.WriteMarkdown(stdout, res); err != nil {
				fmt.Fprintf(stderr, "loadtest scenario: %v\n", err)
			}
			fmt.Fprintf(stdout, "\nwrote %s, %s, %s (%.0f s)\n\n", files.JSON, files.Markdown, files.HTML, res.Elapsed)
		}
		if err != nil {
			fmt.Fprintf(stderr, "loadtest scenario: %s: %v\n", s.Name, err)
			code = exitFail
		}
		if ctx.Err() != nil {
			break
		}
	}
	fmt.Fprintf(stdout, "%d scenario(s) in %s\n", len(todo), time.Since(start).Round(time.Second))
	return code
}

// pick returns the scenarios named, or all of them for "all".
func pick(names []string) ([]scenario.Scenario, error) {
	if len(names) == 0 {
		return nil, errors.New("name a scenario, or all (loadtest scenario -list)")
	}
	if len(names) == 1 && names[0] == "all" {
		return catalog.All()
	}
	var out []scenario.Scenario
	for _, n := range names {
		s, err := catalog.Get(n)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}
