package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/orderlab/orderlab/internal/cli"
	"github.com/orderlab/orderlab/internal/faultproxy"
	"github.com/orderlab/orderlab/lab/dbproxy"
)

const dbproxyUsage = `usage: lab dbproxy [flags]

The lab's database fault proxy (compose profile dbproxy): a TCP proxy from
-listen to -upstream whose faults (latency, blackhole, reset, down) are set
through an HTTP control API on -control, which lab scenario -lab drives
(docs/lab-scenarios.md). Runs until stopped.

flags:
`

type dbproxyPlan struct{ listen, upstream, control string }

func parseDBProxy(args []string, stderr io.Writer) (*dbproxyPlan, error) {
	fs := flag.NewFlagSet("lab dbproxy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, dbproxyUsage); fs.PrintDefaults() }
	p := &dbproxyPlan{}
	fs.StringVar(&p.listen, "listen", ":5432", "`host:port` the services connect to")
	fs.StringVar(&p.upstream, "upstream", "postgres:5432", "Postgres `host:port`")
	fs.StringVar(&p.control, "control", ":9090", "`host:port` of the control API")
	pos, _, err := cli.ParseInterleaved(fs, args)
	if err != nil {
		return nil, err
	}
	if len(pos) > 0 {
		return nil, cli.Usagef("", "unexpected argument %q", pos[0])
	}
	return p, nil
}

func (p *dbproxyPlan) execute(ctx context.Context, stdout, stderr io.Writer) int {
	px, err := faultproxy.NewOn(p.listen, p.upstream)
	if err != nil {
		fmt.Fprintf(stderr, "lab dbproxy: %v\n", err)
		return cli.ExitFail
	}
	defer px.Close()
	d, err := listenAndServe(p.control, dbproxy.NewServer(px))
	if err != nil {
		fmt.Fprintf(stderr, "lab dbproxy: %v\n", err)
		return cli.ExitFail
	}
	fmt.Fprintf(stdout, "dbproxy: %s -> %s, control on %s\n", px.Addr, p.upstream, d.addr)
	return d.serveUntil(ctx, "lab dbproxy", stderr)
}
