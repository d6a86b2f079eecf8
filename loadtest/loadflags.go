package main

import (
	"flag"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/orderlab/orderlab/internal/cli"
	"github.com/orderlab/orderlab/loadtest/attack"
	"github.com/orderlab/orderlab/loadtest/measure"
)

// loadFlags are the raw values of a load mode's flags (burst, closed, open,
// compare), before parseLoad checks them and turns them into a loadPlan.
// Their defaults are attack.Defaults and measure's.
type loadFlags struct {
	mode    string
	compare bool

	// load shape
	loadMode    string
	n           int64
	c           int
	d           time.Duration
	rate        float64
	ramp        time.Duration
	rampFrom    float64
	shard       string
	retries     int
	retry       string
	retryWait   time.Duration
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
	jsonOut    string
	md         bool
	html       string
	slo        string
	scrape     time.Duration
	cpuProfile string
}

// newLoadFlags returns mode's flag set, which parses into the returned
// values. Each mode gets its own; nothing is global.
func newLoadFlags(mode string) (*flag.FlagSet, *loadFlags) {
	compare := mode == "compare"
	f := &loadFlags{mode: mode, compare: compare, loadMode: mode, headers: http.Header{}, metricsOf: map[string]string{}}
	fs := flag.NewFlagSet("loadtest "+mode, flag.ContinueOnError)
	shape := func(modes ...string) bool { return compare || slices.Contains(modes, mode) }
	burst, closed, open := attack.Defaults(attack.ModeBurst), attack.Defaults(attack.ModeClosed), attack.Defaults(attack.ModeOpen)
	if compare {
		fs.StringVar(&f.loadMode, "mode", string(attack.ModeClosed), "load shape for every target: burst, closed or open")
		fs.StringVar(&f.path, "path", "/work/db?delay=20ms", "path and query appended to every target URL")
		fs.Func("metrics", "`name=URL` of a target's Prometheus endpoint (repeatable)", cli.NameURLFlag(f.metricsOf))
		fs.DurationVar(&f.pause, "pause", measure.DefaultPause, "pause between targets, to let each settle")
	} else {
		fs.StringVar(&f.name, "name", "", "label of the target in tables (default: its host:port)")
		fs.StringVar(&f.metrics, "metrics", "", "`URL` of the target's Prometheus endpoint, e.g. http://127.0.0.1:9091/metrics")
	}
	fs.IntVar(&f.retries, "retries", burst.Retries, "most times one request is sent again: after a refused connection (jittered backoff), and after a 429 or 503 under a -retry policy")
	if shape("closed", "open") {
		fs.StringVar(&f.retry, "retry", string(closed.Retry), "what a client does with a 429 or 503: none (count it), immediate (send it again at once: a retry storm), honor (wait Retry-After plus up to as much again in jitter, then send it again), budget (immediate within failsafe-go's retry budget: 20 % of the requests in flight), throttle (the SRE book's adaptive client-side throttling), token-bucket (immediate within gRPC's retry throttling: a bucket of 10 tokens, -1 per rejection, +0.1 per success, retries while above 5)")
		fs.DurationVar(&f.retryWait, "retry-max-wait", closed.RetryMaxWait, "-retry honor: the longest wait before a retry")
	}
	if shape("burst") {
		fs.BoolVar(&f.warmup, "warmup", burst.Warmup, "burst: send an untimed round of the same size first, to open the connections")
	}
	switch mode {
	case "compare":
		fs.Int64Var(&f.n, "n", 0, "requests: burst size, or a bound on closed and open runs")
		fs.IntVar(&f.c, "c", 0, fmt.Sprintf("connections (default: %d closed, %d open; burst uses -n)", closed.Concurrency, open.Concurrency))
	case "burst":
		fs.Int64Var(&f.n, "n", int64(burst.Concurrency), "requests released at once (and connections opened)")
	case "closed":
		fs.Int64Var(&f.n, "n", 0, "stop after this many requests")
		fs.IntVar(&f.c, "c", closed.Concurrency, "connections, one worker each")
	case "open":
		fs.Int64Var(&f.n, "n", 0, "stop after this many requests")
		fs.IntVar(&f.c, "c", open.Concurrency, "most connections opened; the pool grows on demand up to it")
	}
	if shape("closed", "open") {
		fs.DurationVar(&f.d, "d", 0, fmt.Sprintf("duration (default %s closed, %s open, unless -n is given)", closed.Duration, open.Duration))
	}
	if shape("open") {
		fs.Float64Var(&f.rate, "rate", 0, "open: requests per second (required)")
		fs.DurationVar(&f.ramp, "ramp", 0, "open: rise linearly from -ramp-from to -rate over this long")
		fs.Float64Var(&f.rampFrom, "ramp-from", 0, "open: rate at the start of the ramp")
		fs.StringVar(&f.shard, "shard", "", "open: `i/n`, send only requests i, i+n, i+2n, ... of the schedule: generator i of n (counted from 0); -rate and -n are the whole schedule's. Merge the n reports with loadtest merge")
	}
	fs.StringVar(&f.method, "method", closed.Target.Method, "GET, or POST: a generated order body and a unique Idempotency-Key per request")
	fs.Func("H", "extra request `header` \"Name: value\" (repeatable)", func(s string) error {
		k, v, ok := strings.Cut(s, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return fmt.Errorf("want \"Name: value\", got %q", s)
		}
		f.headers.Add(strings.TrimSpace(k), strings.TrimSpace(v))
		return nil
	})
	fs.DurationVar(&f.timeout, "timeout", closed.Timeout, "per-request timeout")
	fs.StringVar(&f.client, "client", string(closed.Client), "HTTP client: fast (lean HTTP/1.1) or net/http")
	fs.BoolVar(&f.allowRemote, "allow-remote", false, "allow targets outside the loopback interface")
	fs.StringVar(&f.jsonOut, "json", "", "write the machine-readable result to `FILE` (- for stdout)")
	fs.BoolVar(&f.md, "md", false, "print a Markdown table instead of the human table")
	fs.StringVar(&f.html, "html", "", "also write the summary table as an HTML page to `FILE`")
	fs.StringVar(&f.slo, "slo", "", "bounds such as 'p99<250ms,errors<1%'; exit 1 when one is missed")
	fs.DurationVar(&f.scrape, "scrape", measure.DefaultScrapeInterval, "interval between metric scrapes")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the client to `FILE`")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: loadtest %s [flags] %s\n\nflags:\n", mode, map[bool]string{false: "URL", true: "[name=URL ...]"}[compare])
		fs.PrintDefaults()
	}
	return fs, f
}

// attackConfig checks the load flags and builds the attack configuration
// every target will share (its Target.URL is set per target). set holds the
// flags given: what is not given keeps attack.Defaults.
func (f *loadFlags) attackConfig(set map[string]bool) (attack.Config, error) {
	cfg := attack.Defaults(attack.Mode(f.loadMode))
	if set["c"] {
		cfg.Concurrency = f.c
	}
	cfg.Requests = f.n
	if set["d"] || set["n"] {
		cfg.Duration = f.d
	}
	cfg.Timeout, cfg.Client, cfg.AllowRemote = f.timeout, attack.ClientKind(f.client), f.allowRemote
	cfg.Target = attack.Target{Method: strings.ToUpper(f.method), Header: f.headers}
	switch cfg.Target.Method {
	case "GET", "POST":
		cfg.Target.Body = attack.BodyFor(cfg.Target.Method)
	default:
		return cfg, cli.Usagef("method", "%q: want GET or POST", f.method)
	}
	switch cfg.Client {
	case attack.ClientFast, attack.ClientNetHTTP:
	default:
		return cfg, cli.Usagef("client", "%q: want fast or net/http", f.client)
	}
	if f.n < 0 {
		return cfg, cli.Usagef("n", "must not be negative")
	}
	if f.d < 0 {
		return cfg, cli.Usagef("d", "must not be negative")
	}
	if f.timeout < 0 {
		return cfg, cli.Usagef("timeout", "must not be negative")
	}
	if f.retries < 0 {
		return cfg, cli.Usagef("retries", "must not be negative")
	}
	cfg.Retries = f.retries
	switch cfg.Mode {
	case attack.ModeBurst:
		if f.n < 1 {
			if f.compare && !set["n"] {
				return cfg, cli.Usagef("n", "required with -mode burst")
			}
			return cfg, cli.Usagef("n", "must be at least 1")
		}
		if set["c"] {
			return cfg, cli.Usagef("c", "not with -mode burst: -n is both the burst size and the connections")
		}
		if set["retry"] {
			return cfg, cli.Usagef("retry", "not with -mode burst: a burst measures one round")
		}
		cfg.Concurrency, cfg.Requests, cfg.Duration = int(f.n), f.n, 0
		cfg.Warmup = f.warmup
	case attack.ModeClosed, attack.ModeOpen:
		if cfg.Concurrency < 1 {
			return cfg, cli.Usagef("c", "must be at least 1")
		}
		if set["d"] && f.d == 0 && f.n == 0 {
			return cfg, cli.Usagef("d", "must be positive unless -n is given")
		}
		if p := attack.RetryPolicy(f.retry); slices.Contains(attack.RetryPolicies, p) {
			cfg.Retry = p
		} else {
			return cfg, cli.Usagef("retry", "%q: want one of %v", f.retry, attack.RetryPolicies)
		}
		if f.retryWait < 0 {
			return cfg, cli.Usagef("retry-max-wait", "must not be negative")
		}
		cfg.RetryMaxWait = f.retryWait
		if cfg.Mode == attack.ModeClosed {
			if set["shard"] {
				return cfg, cli.Usagef("shard", "only with -mode open: a closed run has no schedule to share")
			}
			break
		}
		if !(f.rate > 0) || math.IsInf(f.rate, 0) { // NaN compares false
			return cfg, cli.Usagef("rate", "required, requests per second > 0")
		}
		if f.ramp < 0 {
			return cfg, cli.Usagef("ramp", "must not be negative")
		}
		if !(f.rampFrom >= 0) || math.IsInf(f.rampFrom, 0) {
			return cfg, cli.Usagef("ramp-from", "must be a rate >= 0")
		}
		if set["ramp-from"] && f.ramp == 0 {
			return cfg, cli.Usagef("ramp-from", "needs -ramp: without a ramp the rate is -rate from the start")
		}
		cfg.Pacer = attack.NewPacer(f.rate, f.rampFrom, f.ramp)
		if f.shard != "" {
			var err error
			if cfg.Shard, err = attack.ParseShard(f.shard); err != nil {
				return cfg, cli.Usagef("shard", "%v", err)
			}
			if f.n > 0 && f.n < int64(cfg.Shard.Count) {
				return cfg, cli.Usagef("shard", "-n %d leaves some of the %d generators no request", f.n, cfg.Shard.Count)
			}
		}
	default:
		return cfg, cli.Usagef("mode", "%q: want burst, closed or open", f.loadMode)
	}
	return cfg, nil
}
