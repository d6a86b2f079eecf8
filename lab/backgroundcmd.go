package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/orderlab/orderlab/internal/cli"
	"github.com/orderlab/orderlab/lab/background"
	"github.com/orderlab/orderlab/loadtest/attack"
)

// backgroundPlan is a parsed background command: the lab's background load
// against each target until stopped, counted on a metrics listener.
type backgroundPlan struct {
	load   background.Config
	listen string // address of /metrics and /rate; "": none
	token  string // ADMIN_TOKEN: PUT /rate needs it; "": /rate is read-only
}

// parseBackground reads the background command line into a plan.
func parseBackground(args []string, getenv func(string) string, stderr io.Writer) (*backgroundPlan, error) {
	fs := flag.NewFlagSet("lab background", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rate := fs.Float64("rate", 4, "requests per second to each target, over the whole mix; 0: off (idle until PUT /rate, with -listen and ADMIN_TOKEN; otherwise exit at once)")
	listen := fs.String("listen", "", "`address` to serve the counts on at /metrics, and the rates at /rate, e.g. :9090 (default: none)")
	timeout := fs.Duration("timeout", attack.Defaults(attack.ModeOpen).Timeout, "per-request timeout")
	allowRemote := fs.Bool("allow-remote", false, "allow targets outside the loopback interface (compose service names)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: lab background [flags] name=URL ...\n\n"+
			"A gentle, endless open-loop mix (orders, reads, /work/db, /work/api, /work/cpu) to each\n"+
			"target, so that the board has data; see docs/lab.md, \"Background load\". With -listen,\n"+
			"GET /rate shows each target's rate and PUT /rate {\"name\": rate} changes it live\n"+
			"(Authorization: Bearer $ADMIN_TOKEN; 0 stops that target's load).\n\nflags:\n")
		fs.PrintDefaults()
	}
	pos, _, err := cli.ParseInterleaved(fs, args)
	if err != nil {
		return nil, err
	}
	if !(*rate >= 0) || *rate > 10000 { // NaN compares false
		return nil, cli.Usagef("rate", "%v: want 0 (off) to 10000 requests per second", *rate)
	}
	if *timeout <= 0 {
		return nil, cli.Usagef("timeout", "must be positive")
	}
	if *listen != "" {
		if _, _, err := net.SplitHostPort(*listen); err != nil {
			return nil, cli.Usagef("listen", "%v", err)
		}
	}
	if len(pos) == 0 {
		return nil, cli.Usagef("", "want at least one name=URL target")
	}
	p := &backgroundPlan{listen: *listen, token: getenv("ADMIN_TOKEN"), load: background.Config{
		Rate: *rate, Timeout: *timeout, AllowRemote: *allowRemote,
	}}
	seen := map[string]bool{}
	for _, arg := range pos {
		name, u, ok := strings.Cut(arg, "=")
		if !ok || name == "" {
			return nil, cli.Usagef("", "target %q: want name=URL", arg)
		}
		if seen[name] {
			return nil, cli.Usagef("", "target %q named twice", name)
		}
		seen[name] = true
		if _, err := attack.ParseURL(u, *allowRemote); err != nil {
			return nil, cli.Usagef("", "target %s: %v", name, err)
		}
		p.load.Targets = append(p.load.Targets, background.Target{Name: name, URL: u})
	}
	return p, nil
}

// execute runs the background load until ctx is done: a normal end, exit 0.
func (p *backgroundPlan) execute(ctx context.Context, stdout, stderr io.Writer) int {
	if p.load.Rate == 0 && (p.listen == "" || p.token == "") {
		// Nothing could switch it on (PUT /rate needs the listener and
		// the token): off means gone.
		fmt.Fprintln(stdout, "lab background: off (rate 0)")
		return cli.ExitOK
	}
	reg := prometheus.NewRegistry()
	p.load.Metrics, p.load.Log = reg, stdout
	names := make([]string, len(p.load.Targets))
	for i, t := range p.load.Targets {
		names[i] = t.Name
	}
	p.load.Rates = background.NewRates(p.load.Rate, names...)
	if p.listen != "" {
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		mux.Handle("/rate", p.load.Rates.Handler(p.token, stdout))
		d, err := listenAndServe(p.listen, mux)
		if err != nil {
			fmt.Fprintf(stderr, "lab background: -listen: %v\n", err)
			return cli.ExitFail
		}
		defer func() {
			if err := d.shutdown(ctx); err != nil {
				fmt.Fprintf(stderr, "lab background: metrics listener: %v\n", err)
			}
		}()
	}
	fmt.Fprintf(stdout, "lab background: %g requests/s to each of %s (orders, reads, /work/db, /work/api, /work/cpu), User-Agent %s",
		p.load.Rate, strings.Join(names, ", "), background.UserAgent)
	if p.listen != "" {
		fmt.Fprintf(stdout, "; counts on %s/metrics", p.listen)
	}
	fmt.Fprintln(stdout)
	if err := background.Run(ctx, p.load); err != nil {
		fmt.Fprintf(stderr, "lab background: %v\n", err)
		return cli.ExitFail
	}
	return cli.ExitOK
}
