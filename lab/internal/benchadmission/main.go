// Command benchadmission measures what turning a request away costs the
// server, against what a trivial route costs and what HTTP itself costs. It
// starts the semaphore service with one permit, holds that permit with a
// long GET /work/db, and loads POST /orders in a closed loop, so that every
// answer is a 429; then it loads GET /livez on the same process, and a bare
// net/http handler (this binary with -bare-server: a fixed 200, nothing
// else) in a process of its own pinned to the same CPU, both at the same
// rate (an open loop at the rate the 429s came at: Go's scheduler costs
// more per request at a low rate than at a high one, so all must run at one
// rate to compare). It prints the server's CPU time
// (process_cpu_seconds_total, user and system) per answer of each, the
// median of several rounds with their range, and the 429's ratio to the
// bare answer (target: at most 1.5x). It does so
// once with LIMIT_WAIT=0 (refused at once) and once with the 100 ms the
// scenarios use (refused after a bounded wait). `make bench-admission` runs
// it, with this client and the service pinned to different CPUs.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/orderlab/orderlab/internal/pgdb"
	"github.com/orderlab/orderlab/lab/local"
	"github.com/orderlab/orderlab/lab/scenario/result"
	"github.com/orderlab/orderlab/loadtest/attack"
	"github.com/orderlab/orderlab/loadtest/measure"
	"github.com/orderlab/orderlab/loadtest/scrape"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// options are the command line.
type options struct {
	bin, db, serverCPU string
	conns, rounds      int
	dur                time.Duration
	waits              []time.Duration
}

// run is the whole program; it returns the exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if len(args) == 2 && args[0] == bareFlag {
		fmt.Fprintln(stderr, "benchadmission:", serveBare(args[1]))
		return 1
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	fs := flag.NewFlagSet("benchadmission", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.StringVar(&o.bin, "bin", "bin", "directory of the built services (make build)")
	fs.StringVar(&o.db, "db", pgdb.DefaultURL, "Postgres URL of a user that may CREATE DATABASE (default $DATABASE_URL)")
	fs.StringVar(&o.serverCPU, "server-cpu", "", "CPU list to pin the service to (taskset -p -c); empty: no pinning")
	fs.IntVar(&o.conns, "c", 500, "connections of the closed loop of 429s")
	fs.IntVar(&o.rounds, "rounds", 5, "rounds of each load; the median counts")
	fs.DurationVar(&o.dur, "d", 5*time.Second, "duration of each round")
	waits := fs.String("limit-wait", "0s,100ms", "LIMIT_WAIT values to measure, comma-separated")
	if v := getenv("DATABASE_URL"); v != "" {
		o.db = v
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	for _, w := range strings.Split(*waits, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(w))
		if err != nil || d < 0 {
			fmt.Fprintf(stderr, "benchadmission: -limit-wait %q: want durations such as 0s,100ms\n", *waits)
			return 2
		}
		o.waits = append(o.waits, d)
	}
	if o.conns < 1 || o.rounds < 1 || o.dur <= 0 {
		fmt.Fprintln(stderr, "benchadmission: -c, -rounds and -d must be positive")
		return 2
	}
	if err := o.measure(ctx, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "benchadmission:", err)
		return 1
	}
	return 0
}

func (o options) measure(ctx context.Context, stdout, stderr io.Writer) error {
	db, err := pgdb.Create(ctx, o.db, "orderlab_bench_admission")
	if err != nil {
		return err
	}
	defer db.Drop(context.WithoutCancel(ctx)) //nolint:errcheck // best effort
	logDir, err := os.MkdirTemp("", "benchadmission")
	if err != nil {
		return err
	}
	defer os.RemoveAll(logDir)

	b, err := o.startBare(ctx, logDir)
	if err != nil {
		return err
	}
	defer b.p.Stop(5 * time.Second) //nolint:errcheck // the figures are taken

	fmt.Fprintf(stdout, "server CPU per answer (process_cpu_seconds_total), semaphore service with LIMIT=1 held: "+
		"POST /orders in a closed loop of %d connections (every answer a 429), then GET /livez and a bare net/http "+
		"handler at the same rate; %s a round, median of %d rounds (range); servers pinned to CPU %q\n\n",
		o.conns, o.dur, o.rounds, o.serverCPU)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "LIMIT_WAIT\t429s/s\tCPU per 429\tCPU per /livez\tCPU per bare\t429 / livez\t429 / bare\ttarget <= 1.5x bare\t")
	for _, wait := range o.waits {
		rej, live, plain, err := o.rounds3(ctx, db.URL, wait, logDir, b, stderr)
		if err != nil {
			return err
		}
		rm, rlo, rhi := result.Median(rej.cpu)
		lm, llo, lhi := result.Median(live.cpu)
		bm, blo, bhi := result.Median(plain.cpu)
		rr, _, _ := result.Median(rej.rate)
		verdict := "met"
		if rm > 1.5*bm {
			verdict = "MISSED"
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%.1f µs (%.1f-%.1f)\t%.1f µs (%.1f-%.1f)\t%.1f µs (%.1f-%.1f)\t%.2fx\t%.2fx\t%s\t\n",
			wait, rr, rm, rlo, rhi, lm, llo, lhi, bm, blo, bhi, rm/lm, rm/bm, verdict)
	}
	return tw.Flush()
}

// figures are one load's rounds: server µs of CPU per answer, answers/s.
type figures struct{ cpu, rate []float64 }

// rounds3 starts the service with LIMIT_WAIT=wait and measures the three
// loads, one after the other, o.rounds times.
func (o options) rounds3(ctx context.Context, dbURL string, wait time.Duration, logDir string, b *bare,
	stderr io.Writer) (rej, live, plain figures, err error) {
	l, err := local.Start(ctx, local.Config{BinDir: o.bin, Services: []string{"semaphore"}, Database: dbURL, LogDir: logDir,
		Env: map[string]string{"LIMIT": "1", "LIMIT_WAIT": wait.String(), "REQUEST_TIMEOUT": "20s"}})
	if err != nil {
		return rej, live, plain, err
	}
	defer l.Stop() //nolint:errcheck // the figures are taken
	svc := l.Services[0]
	if o.serverCPU != "" {
		if out, err := exec.Command("taskset", "-a", "-p", "-c", o.serverCPU, strconv.Itoa(svc.Pid())).CombinedOutput(); err != nil {
			fmt.Fprintf(stderr, "benchadmission: the service is not pinned: taskset: %v %s\n", err, out)
		}
	}
	for range o.rounds {
		release, err := hold(ctx, svc.URL, svc.MetricsURL)
		if err != nil {
			return rej, live, plain, err
		}
		cpu, rate, err := o.load(ctx, svc.URL+"/orders", "POST", svc.MetricsURL, 429, 0)
		release()
		if err != nil {
			return rej, live, plain, err
		}
		rej.cpu, rej.rate = append(rej.cpu, cpu), append(rej.rate, rate)
		if cpu, rate, err = o.load(ctx, svc.URL+"/livez", "GET", svc.MetricsURL, 200, rate); err != nil {
			return rej, live, plain, err
		}
		live.cpu, live.rate = append(live.cpu, cpu), append(live.rate, rate)
		if cpu, rate, err = o.load(ctx, b.url, "GET", b.stats, 200, rej.rate[len(rej.rate)-1]); err != nil {
			return rej, live, plain, err
		}
		plain.cpu, plain.rate = append(plain.cpu, cpu), append(plain.rate, rate)
	}
	return rej, live, plain, nil
}

// load runs one round, a closed loop or (at a rate > 0) an open one, and
// returns the server's µs of CPU per answer and the answers per second;
// every answer must have status want.
func (o options) load(ctx context.Context, url, method, metricsURL string, want int, rate float64) (float64, float64, error) {
	cfg := attack.Defaults(attack.ModeClosed)
	if rate > 0 {
		cfg = attack.Defaults(attack.ModeOpen)
		cfg.Pacer = attack.ConstantPacer{Rate: rate}
	}
	cfg.Concurrency, cfg.Duration = o.conns, o.dur
	cfg.Target = attack.Target{Method: method, URL: url, Body: attack.BodyFor(method)}
	run, err := measure.Run(ctx, measure.Target{Name: method + " " + url, MetricsURL: metricsURL}, cfg,
		measure.Options{ScrapeInterval: time.Hour}) // one scrape before, one after
	if err != nil {
		return 0, 0, err
	}
	if n := run.Status[strconv.Itoa(want)]; n != run.Answered || n == 0 {
		return 0, 0, fmt.Errorf("%s %s: status %v, want only %d", method, url, run.Status, want)
	}
	if run.Server == nil || run.Server.CPUSeconds == 0 {
		return 0, 0, fmt.Errorf("%s: no CPU figure from %s", url, metricsURL)
	}
	return run.Server.CPUSeconds / float64(run.Answered) * 1e6, float64(run.Answered) / run.ElapsedSeconds, nil
}

// hold takes the service's one permit with a GET /work/db that sleeps 10 s
// in Postgres, and returns once the permit is taken; release cancels it.
func hold(ctx context.Context, base, metricsURL string) (release func(), err error) {
	hctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		req, _ := http.NewRequestWithContext(hctx, http.MethodGet, base+"/work/db?delay=10s", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	release = func() { cancel(); <-done }
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		s, err := (scrape.Scraper{URL: metricsURL}).Scrape(ctx)
		if err != nil {
			release()
			return nil, err
		}
		if s.InFlight >= 1 {
			return release, nil
		}
	}
	release()
	return nil, fmt.Errorf("the holder never took the permit")
}
