package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/orderlab/orderlab/internal/cli"
	"github.com/orderlab/orderlab/lab/front"
	"github.com/orderlab/orderlab/lab/scenario/catalog"
	"github.com/orderlab/orderlab/lab/scenario/setup"
)

const frontUsage = `usage: lab front [flags]

The lab's front page (docs/front-page.md): pick a scenario of the catalog,
run it in the running lab (as lab scenario NAME -lab does), watch it,
read its verdicts; change the services' knobs and the background load. Open
http://127.0.0.1:8080. Its JSON API under /api/ is what the page uses.

From the host it drives compose's published ports (the same as make run's);
inside compose (ORDERLAB_LAB=compose) the services by name. -target and
-metrics point it at other services, as for lab scenario.

flags:
`

// frontPlan is a parsed front command.
type frontPlan struct {
	listen string
	cfg    front.Config
}

func parseFront(args []string, getenv func(string) string, stderr io.Writer) (*frontPlan, error) {
	fs := flag.NewFlagSet("lab front", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, frontUsage); fs.PrintDefaults() }
	compose := inCompose(getenv)
	p := &frontPlan{}
	fs.StringVar(&p.listen, "listen", "127.0.0.1:8080", "`address` to serve the page on")
	allowRemote := fs.Bool("allow-remote", false, "allow a -listen address outside the loopback interface, and remote services (inside compose)")
	fs.IntVar(&p.cfg.Keep, "keep", 20, "keep the reports of the last `N` runs")
	out, bg := "results/front", ""
	if compose {
		out, bg = "/tmp/orderlab-front", "http://background:9090"
	}
	fs.StringVar(&p.cfg.Runner.Out, "out", out, "results `directory` of the runs")
	fs.StringVar(&p.cfg.Prometheus, "prometheus", labPrometheus(getenv), "the lab's Prometheus, for the live charts, what the lab sees and the runs' pitfall alerts (`URL`)")
	fs.StringVar(&p.cfg.Background, "background", bg, "`URL` of lab background's -listen (GET/PUT /rate); empty: none")
	fs.StringVar(&p.cfg.Grafana, "grafana", "http://127.0.0.1:3000", "Grafana as the browser opens it, for the page's links (`URL`)")
	proxy := addProxyFlags(fs)
	targets, metrics := map[string]string{}, map[string]string{}
	fs.Func("target", "`name=URL` of a service to use instead of the lab's (repeatable; with -metrics)", cli.NameURLFlag(targets))
	fs.Func("metrics", "`name=URL` of a -target's /metrics on its admin listener (repeatable)", cli.NameURLFlag(metrics))
	pos, _, err := cli.ParseInterleaved(fs, args)
	if err != nil {
		return nil, err
	}
	if len(pos) > 0 {
		return nil, cli.Usagef("", "front takes no arguments, got %q", pos)
	}
	if p.cfg.Keep < 1 {
		return nil, cli.Usagef("keep", "must be at least 1")
	}
	host, _, err := net.SplitHostPort(p.listen)
	if err != nil {
		return nil, cli.Usagef("listen", "%v", err)
	}
	if ip := net.ParseIP(host); !*allowRemote && host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, cli.Usagef("listen", "%s is not a loopback address: give -allow-remote to serve beyond this machine", p.listen)
	}
	r, l := &p.cfg.Runner, &p.cfg.Lab
	if err := useLab(r, l, getenv); err != nil {
		return nil, err
	}
	l.AllowRemote = l.AllowRemote || *allowRemote
	r.Board, r.Prometheus = labBoard, p.cfg.Prometheus
	if g := strings.TrimRight(p.cfg.Grafana, "/"); g != "" {
		r.Board = g + "/d/" + boardUID
	}
	for name := range metrics {
		if targets[name] == "" {
			return nil, fmt.Errorf("-metrics %s without -target %s", name, name)
		}
	}
	if len(targets) > 0 {
		l.Endpoints = map[string]setup.Endpoint{}
		for name, u := range targets {
			if metrics[name] == "" {
				return nil, fmt.Errorf("-target %s without -metrics %s: the page needs its admin listener", name, name)
			}
			l.Endpoints[name] = setup.Endpoint{URL: u, MetricsURL: metrics[name], AdminURL: strings.TrimSuffix(metrics[name], "/metrics")}
		}
	}
	if err := proxy.apply(l); err != nil {
		return nil, err
	}
	if p.cfg.Catalog, err = catalog.All(); err != nil {
		return nil, err
	}
	return p, nil
}

// execute serves the page until ctx is done; a run in progress is then
// stopped and its knobs put back before it returns.
func (p *frontPlan) execute(ctx context.Context, stdout, stderr io.Writer) int {
	p.cfg.Log = stdout
	srv, err := front.New(p.cfg)
	if err != nil {
		fmt.Fprintf(stderr, "lab front: %v\n", err)
		return cli.ExitFail
	}
	defer srv.Close()
	d, err := listenAndServe(p.listen, srv)
	if err != nil {
		fmt.Fprintf(stderr, "lab front: %v\n", err)
		return cli.ExitFail
	}
	fmt.Fprintf(stdout, "lab front: the lab's front page on http://%s (board %s)\n", d.addr, p.cfg.Runner.Board)
	return d.serveUntil(ctx, "lab front", stderr)
}
