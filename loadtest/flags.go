package main

import (
	"flag"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/orderlab/orderlab/loadtest/attack"
	"github.com/orderlab/orderlab/loadtest/report"
)

// command holds one mode's flag set and the values it parses into. Each
// mode gets its own; nothing is global.
type command struct {
	mode    string
	compare bool
	fs      *flag.FlagSet

	// load shape
	loadMode    string
	n           int64
	c           int
	d           time.Duration
	rate        float64
	ramp        time.Duration
	rampFrom    float64
	retries     int
	warmup      bool
	method      string
	headers     http.Header
	timeout     time.Duration
	client      string
	allowRemote bool

	// targets
	name      string
	metrics   string            // single-target modes
	metricsOf map[string]string // compare: -metrics name=URL
	path      string
	pause     time.Duration

	// output
	jsonOut string
	md      bool
	slo     string
	scrape  time.Duration

	cpuProfile string
}

func newCommand(mode string, compare bool) *command {
	c := &command{mode: mode, compare: compare, loadMode: mode, headers: http.Header{}, metricsOf: map[string]string{}}
	fs := flag.NewFlagSet("loadtest "+mode, flag.ContinueOnError)
	c.fs = fs
	shape := func(modes ...string) bool { return compare || slices.Contains(modes, mode) }
	if compare {
		fs.StringVar(&c.loadMode, "mode", "closed", "load shape for every target: burst, closed or open")
		fs.StringVar(&c.path, "path", "/work/db?delay=20ms", "path and query appended to every target URL")
		fs.Func("metrics", "`name=URL` of a target's Prometheus endpoint (repeatable)", nameURLFlag(c.metricsOf))
		fs.DurationVar(&c.pause, "pause", 2*time.Second, "pause between targets, to let each settle")
	} else {
		fs.StringVar(&c.name, "name", "", "label of the target in tables (default: its host:port)")
		fs.StringVar(&c.metrics, "metrics", "", "`URL` of the target's Prometheus endpoint, e.g. http://127.0.0.1:9091/metrics")
	}
	if shape("burst") {
		fs.IntVar(&c.retries, "retries", 5, "burst: retries of a refused connection, with jittered backoff")
		fs.BoolVar(&c.warmup, "warmup", true, "burst: send an untimed round of the same size first, to open the connections")
	}
	switch {
	case compare:
		fs.Int64Var(&c.n, "n", 0, "requests: burst size, or a bound on closed and open runs")
		fs.IntVar(&c.c, "c", 0, "connections (default: 50 closed, 1000 open; burst uses -n)")
	case mode == "burst":
		fs.Int64Var(&c.n, "n", 1000, "requests released at once (and connections opened)")
	case mode == "closed":
		fs.Int64Var(&c.n, "n", 0, "stop after this many requests")
		fs.IntVar(&c.c, "c", 50, "connections, one worker each")
	case mode == "open":
		fs.Int64Var(&c.n, "n", 0, "stop after this many requests")
		fs.IntVar(&c.c, "c", 1000, "most connections opened; the pool grows on demand up to it")
	}
	if shape("closed", "open") {
		fs.DurationVar(&c.d, "d", 0, "duration (default 10s closed, 30s open, unless -n is given)")
	}
	if shape("open") {
		fs.Float64Var(&c.rate, "rate", 0, "open: requests per second (required)")
		fs.DurationVar(&c.ramp, "ramp", 0, "open: rise linearly from -ramp-from to -rate over this long")
		fs.Float64Var(&c.rampFrom, "ramp-from", 0, "open: rate at the start of the ramp")
	}
	fs.StringVar(&c.method, "method", "GET", "GET, or POST: a generated order body and a unique Idempotency-Key per request")
	fs.Func("H", "extra request `header` \"Name: value\" (repeatable)", func(s string) error {
		k, v, ok := strings.Cut(s, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return fmt.Errorf("want \"Name: value\", got %q", s)
		}
		c.headers.Add(strings.TrimSpace(k), strings.TrimSpace(v))
		return nil
	})
	fs.DurationVar(&c.timeout, "timeout", 30*time.Second, "per-request timeout")
	fs.StringVar(&c.client, "client", string(attack.ClientFast), "HTTP client: fast (lean HTTP/1.1) or net/http")
	fs.BoolVar(&c.allowRemote, "allow-remote", false, "allow targets outside the loopback interface")
	fs.StringVar(&c.jsonOut, "json", "", "write the machine-readable result to `FILE` (- for stdout)")
	fs.BoolVar(&c.md, "md", false, "print a Markdown table instead of the human table")
	fs.StringVar(&c.slo, "slo", "", "bounds such as 'p99<250ms,errors<1%'; exit 1 when one is missed")
	fs.DurationVar(&c.scrape, "scrape", time.Second, "interval between metric scrapes")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of the client to `FILE`")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: loadtest %s [flags] %s\n\nflags:\n", mode, map[bool]string{false: "URL", true: "[name=URL ...]"}[compare])
		fs.PrintDefaults()
	}
	return c
}

// parse reads args into a plan, or returns a usageError naming the flag.
func (c *command) parse(args []string) (*plan, error) {
	pos, err := parseInterleaved(c.fs, args)
	if err != nil {
		return nil, err // the flag package has printed the problem and the usage
	}
	set := map[string]bool{}
	c.fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	cfg, err := c.config(set)
	if err != nil {
		return nil, err
	}
	slo, err := report.ParseSLO(c.slo)
	if err != nil {
		return nil, usagef("slo", "%v", err)
	}
	if c.scrape <= 0 {
		return nil, usagef("scrape", "must be positive")
	}
	if c.pause < 0 {
		return nil, usagef("pause", "must not be negative")
	}
	if c.jsonOut == "-" && c.md {
		return nil, usagef("md", "cannot share stdout with -json -")
	}
	targets, err := c.targets(pos)
	if err != nil {
		return nil, err
	}
	return &plan{cmd: c, cfg: cfg, targets: targets, slo: slo}, nil
}

// config builds the attack configuration every target will share.
func (c *command) config(set map[string]bool) (attack.Config, error) {
	cfg := attack.Config{
		Mode:        attack.Mode(c.loadMode),
		Concurrency: c.c,
		Requests:    c.n,
		Duration:    c.d,
		Timeout:     c.timeout,
		Client:      attack.ClientKind(c.client),
		AllowRemote: c.allowRemote,
		Target:      attack.Target{Method: strings.ToUpper(c.method), Header: c.headers},
	}
	switch cfg.Target.Method {
	case "GET":
	case "POST":
		cfg.Target.Body = attack.OrderBody
	default:
		return cfg, usagef("method", "%q: want GET or POST", c.method)
	}
	switch cfg.Client {
	case attack.ClientFast, attack.ClientNetHTTP:
	default:
		return cfg, usagef("client", "%q: want fast or net/http", c.client)
	}
	if c.n < 0 {
		return cfg, usagef("n", "must not be negative")
	}
	if c.d < 0 {
		return cfg, usagef("d", "must not be negative")
	}
	if c.timeout < 0 {
		return cfg, usagef("timeout", "must not be negative")
	}
	switch cfg.Mode {
	case attack.ModeBurst:
		if c.n < 1 {
			if c.compare && !set["n"] {
				return cfg, usagef("n", "required with -mode burst")
			}
			return cfg, usagef("n", "must be at least 1")
		}
		if set["c"] {
			return cfg, usagef("c", "not with -mode burst: -n is both the burst size and the connections")
		}
		if c.retries < 0 {
			return cfg, usagef("retries", "must not be negative")
		}
		cfg.Concurrency, cfg.Requests, cfg.Duration = int(c.n), c.n, 0
		cfg.Retries, cfg.Warmup = c.retries, c.warmup
	case attack.ModeClosed, attack.ModeOpen:
		open := cfg.Mode == attack.ModeOpen
		if !set["c"] {
			cfg.Concurrency = map[bool]int{false: 50, true: 1000}[open]
		}
		if cfg.Concurrency < 1 {
			return cfg, usagef("c", "must be at least 1")
		}
		if !set["d"] && !set["n"] {
			cfg.Duration = map[bool]time.Duration{false: 10 * time.Second, true: 30 * time.Second}[open]
		}
		if set["d"] && c.d == 0 && c.n == 0 {
			return cfg, usagef("d", "must be positive unless -n is given")
		}
		if !open {
			break
		}
		if !(c.rate > 0) || math.IsInf(c.rate, 0) { // NaN compares false
			return cfg, usagef("rate", "required, requests per second > 0")
		}
		if c.ramp < 0 {
			return cfg, usagef("ramp", "must not be negative")
		}
		if !(c.rampFrom >= 0) || math.IsInf(c.rampFrom, 0) {
			return cfg, usagef("ramp-from", "must be a rate >= 0")
		}
		if set["ramp-from"] && c.ramp == 0 {
			return cfg, usagef("ramp-from", "needs -ramp: without a ramp the rate is -rate from the start")
		}
		cfg.Pacer = attack.ConstantPacer{Rate: c.rate}
		if c.ramp > 0 {
			cfg.Pacer = attack.RampPacer{From: c.rampFrom, To: c.rate, Ramp: c.ramp}
		}
	default:
		return cfg, usagef("mode", "%q: want burst, closed or open", c.loadMode)
	}
	return cfg, nil
}
