package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/orderlab/orderlab/internal/cli"
	"github.com/orderlab/orderlab/lab/diagnose"
)

const diagnoseUsage = `usage: lab diagnose [flags]

Which pitfall of the catalog does Prometheus see now? Each pitfall alert
firing (prometheus/rules: the rules whose labels have pitfall), on which
service, since when, its evidence with values and units, and the page to
read; "no pitfall: ..." when none fires. Pending alerts are listed as
such, never named. Any Prometheus that scrapes the services' metrics and
loads the pitfall rules answers it: your own too (docs/diagnose.md).

Exit status: 0 no pitfall fires, 1 one does, 2 it could not ask
(Prometheus unreachable, or loading no pitfall rule).

flags:
`

// diagnosePlan is a parsed diagnose command.
type diagnosePlan struct {
	prometheus string
	json       bool
	timeout    time.Duration
}

func parseDiagnose(args []string, getenv func(string) string, stderr io.Writer) (*diagnosePlan, error) {
	fs := flag.NewFlagSet("lab diagnose", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, diagnoseUsage); fs.PrintDefaults() }
	p := &diagnosePlan{}
	fs.StringVar(&p.prometheus, "prometheus", labPrometheus(getenv), "the Prometheus to ask (`URL`)")
	fs.BoolVar(&p.json, "json", false, `print {"findings":[...]} instead of text`)
	fs.DurationVar(&p.timeout, "timeout", 10*time.Second, "give up asking after `d`")
	pos, _, err := cli.ParseInterleaved(fs, args)
	if err != nil {
		return nil, err
	}
	if len(pos) > 0 {
		return nil, cli.Usagef("", "diagnose takes no arguments, got %q", pos)
	}
	if u, err := url.Parse(p.prometheus); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, cli.Usagef("prometheus", "want http(s)://host:port, got %q", p.prometheus)
	}
	if p.timeout <= 0 {
		return nil, cli.Usagef("timeout", "must be positive")
	}
	return p, nil
}

// execute asks once and prints. Its exit codes are the mode's own: 1 is a
// pitfall found, 2 a question that could not be asked.
func (p *diagnosePlan) execute(ctx context.Context, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	tr := &http.Transport{} // no proxy from the environment: the plan reads nothing else
	defer tr.CloseIdleConnections()
	r, err := diagnose.Read(ctx, &http.Client{Transport: tr}, p.prometheus)
	if err != nil {
		fmt.Fprintf(stderr, "lab diagnose: cannot ask %s: %v\n", p.prometheus, err)
		return cli.ExitUsage
	}
	for _, b := range r.Broken {
		fmt.Fprintf(stderr, "lab diagnose: a pitfall rule cannot evaluate, so it cannot fire: %s\n", b)
	}
	if p.json {
		if err := diagnose.WriteJSON(stdout, r); err != nil {
			fmt.Fprintf(stderr, "lab diagnose: %v\n", err)
			return cli.ExitUsage
		}
	} else {
		diagnose.WriteText(stdout, r, p.prometheus, time.Now())
	}
	if len(r.Findings) > 0 {
		return cli.ExitFail
	}
	return cli.ExitOK
}
