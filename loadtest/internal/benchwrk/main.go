// Command benchwrk measures loadtest's own cost and its own error against a
// trivial local endpoint. Cost is requests per client CPU-second (user +
// system time of the client process, so it does not depend on how fast the
// server is), against wrk's in a closed loop on the same endpoint and the
// same pinned CPU: loadtest in closed mode and in open mode at each -rate,
// with HDR recording and its metrics scrape on (the endpoint serves a small
// /metrics). Error is an open run's lateness, the time from a request's
// intended send to its actual send, which lands in every corrected latency.
// Each figure is the median of -rounds runs, with the range.
// `make bench-loadtest` runs it.
package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/orderlab/orderlab/loadtest/report"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// client is one row of the table: a command and how to read its count.
type client struct {
	name string
	argv []string // "@" stands for the path of the report the client writes
	read func(out []byte, jsonFile string) (sample, error)
	// ref is the name of the row this one is compared with besides wrk
	// (an open run's rate-matched reference), or "".
	ref string
}

// sample is what one run of a client measured.
type sample struct {
	requests int64
	lag      *report.Latency // open runs: actual minus intended send time
}

// run is the whole program; it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	fs := flag.NewFlagSet("benchwrk", flag.ContinueOnError)
	fs.SetOutput(stderr)
	loadtest := fs.String("loadtest", "bin/loadtest", "path of the loadtest binary")
	conns := fs.Int("c", 50, "connections")
	dur := fs.Duration("d", 5*time.Second, "duration of each run")
	rounds := fs.Int("rounds", 3, "runs per client; the median counts")
	cpu := fs.String("cpu", "1", "CPU list the clients are pinned to (taskset -c); empty: no pinning")
	rates := fs.String("rate", "2000,20000", "comma-separated arrival rates of the open runs")
	nethttp := fs.Bool("nethttp", true, "also measure loadtest's -client net/http in closed mode")
	vegeta := fs.String("vegeta", "bin/vegeta", "path of the vegeta binary, the rate-matched reference of the open runs; empty: none")
	serveOnly := fs.String("serve", "", "only serve the endpoint on `ADDR` until interrupted (for profiling a client by hand)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *serveOnly != "" {
		srv := &http.Server{Addr: *serveOnly, Handler: http.HandlerFunc(serve)}
		go func() { <-ctx.Done(); _ = srv.Close() }()
		if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(stderr, "benchwrk:", err)
			return 1
		}
		return 0
	}
	if *conns < 1 || *dur <= 0 || *rounds < 1 {
		fmt.Fprintln(stderr, "benchwrk: -c, -d and -rounds must be positive")
		return 2
	}
	if _, err := exec.LookPath("wrk"); err != nil {
		fmt.Fprintln(stderr, "benchwrk: wrk is not installed (apt-get install wrk)")
		return 1
	}
	if *vegeta != "" {
		if _, err := exec.LookPath(*vegeta); err != nil {
			fmt.Fprintf(stderr, "benchwrk: vegeta not found at %s (go install github.com/tsenart/vegeta/v12@v12.13.0, or -vegeta '' for none)\n", *vegeta)
			return 1
		}
	}
	pin := []string{}
	if *cpu != "" {
		if _, err := exec.LookPath("taskset"); err == nil {
			pin = []string{"taskset", "-c", *cpu}
		} else {
			fmt.Fprintln(stderr, "benchwrk: taskset not found; clients are not pinned")
		}
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(stderr, "benchwrk:", err)
		return 1
	}
	srv := &http.Server{Handler: http.HandlerFunc(serve)}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	base := "http://" + ln.Addr().String()
	url, metrics := base+"/", base+"/metrics"

	d := strconv.Itoa(int(dur.Seconds())) + "s"
	c := strconv.Itoa(*conns)
	lt := func(mode string, more ...string) []string {
		return append([]string{*loadtest, mode, "-c", c, "-d", d, "-metrics", metrics, "-json", "@"}, append(more, url)...)
	}
	clients := []client{
		{name: "wrk -t1 (closed)", argv: []string{"wrk", "-t1", "-c" + c, "-d" + d, url}, read: wrkRequests},
		{name: "loadtest closed", argv: lt("closed"), read: loadtestRequests},
	}
	if *nethttp {
		clients = append(clients, client{name: "loadtest closed, net/http", argv: lt("closed", "-client", "net/http"), read: loadtestRequests})
	}
	tmp, err := os.MkdirTemp("", "benchwrk")
	if err != nil {
		fmt.Fprintln(stderr, "benchwrk:", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	targets := tmp + "/targets.txt"
	if err := os.WriteFile(targets, []byte("GET "+url+"\n"), 0o644); err != nil {
		fmt.Fprintln(stderr, "benchwrk:", err)
		return 1
	}
	for r := range strings.SplitSeq(*rates, ",") {
		rate, err := strconv.ParseFloat(r, 64)
		if err != nil || rate <= 0 {
			fmt.Fprintf(stderr, "benchwrk: -rate %q: not a positive number\n", r)
			return 2
		}
		ref := ""
		if *vegeta != "" {
			ref = "vegeta open " + r + "/s"
			clients = append(clients, client{name: ref, argv: vegetaAttack(*vegeta, targets, r, c, d), read: vegetaResults(*vegeta, rate)})
		}
		clients = append(clients, client{name: "loadtest open " + r + "/s", argv: lt("open", "-rate", r), read: loadtestRequests, ref: ref})
	}

	fmt.Fprintf(stdout, "%s connections, %s per run, median of %d runs [range]; clients pinned to CPU %q, server elsewhere\n\n", c, d, *rounds, *cpu)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "client\trequests per CPU-second\tvs wrk\tvs reference\tsent/s\tlateness p50\tp99\tmax\t")
	var wrk float64
	medians := map[string]float64{} // by client name
	for _, cl := range clients {
		var rates, sentRates, p50s, p99s, maxs []float64
		for i := range *rounds {
			s, cpu, err := runOnce(ctx, cl, pin, fmt.Sprintf("%s/run-%d.json", tmp, i))
			if err != nil {
				fmt.Fprintf(stderr, "benchwrk: %s: %v\n", cl.name, err)
				return 1
			}
			rates = append(rates, float64(s.requests)/cpu)
			sentRates = append(sentRates, float64(s.requests)/dur.Seconds())
			if s.lag != nil {
				p50s, p99s, maxs = append(p50s, s.lag.P50), append(p99s, s.lag.P99), append(maxs, s.lag.Max)
			}
		}
		med, lo, hi := spread(rates)
		if wrk == 0 {
			wrk = med
		}
		medians[cl.name] = med
		vsRef := "-"
		if ref := medians[cl.ref]; ref > 0 {
			vsRef = fmt.Sprintf("%.2fx [%.2f-%.2f]", med/ref, lo/ref, hi/ref)
		}
		sent, _, _ := spread(sentRates)
		fmt.Fprintf(tw, "%s\t%.0f [%.0f-%.0f]\t%.2fx [%.2f-%.2f]\t%s\t%.0f\t%s\t%s\t%s\t\n", cl.name, med, lo, hi, med/wrk, lo/wrk, hi/wrk,
			vsRef, sent, seconds(p50s), seconds(p99s), seconds(maxs))
	}
	_ = tw.Flush()
	fmt.Fprintln(stdout, "\n(vs wrk: against wrk's median, a closed loop running flat out; vs reference: an open run against the median of vegeta at the same rate and connections;")
	fmt.Fprintln(stdout, "sent/s: median requests sent per second of the window; lateness: actual minus intended send time of the open runs, vegeta's a lower bound)")
	return 0
}

// runOnce runs cl once and returns what it measured and the CPU-seconds it used.
func runOnce(ctx context.Context, cl client, pin []string, jsonFile string) (sample, float64, error) {
	argv := slices.Clone(cl.argv)
	for j, a := range argv {
		if a == "@" {
			argv[j] = jsonFile
		}
	}
	argv = append(slices.Clone(pin), argv...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return sample{}, 0, fmt.Errorf("%v\n%s", err, out.Bytes())
	}
	s, err := cl.read(out.Bytes(), jsonFile)
	if err != nil {
		return sample{}, 0, fmt.Errorf("%v\n%s", err, out.Bytes())
	}
	return s, (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds(), nil
}

// serve is the trivial endpoint, and a /metrics page for loadtest's scrape.
func serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/metrics" {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = io.WriteString(w, "# TYPE go_goroutines gauge\ngo_goroutines 8\n# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 1\n")
		return
	}
	_, _ = w.Write([]byte("ok"))
}

// spread returns the median, the least and the greatest of xs.
func spread(xs []float64) (med, lo, hi float64) {
	slices.Sort(xs)
	return xs[len(xs)/2], xs[0], xs[len(xs)-1]
}

// seconds formats the median and range of durations in seconds, or "-".
func seconds(xs []float64) string {
	if len(xs) == 0 {
		return "-"
	}
	med, lo, hi := spread(xs)
	return fmt.Sprintf("%s [%s-%s]", report.FormatSeconds(med), report.FormatSeconds(lo), report.FormatSeconds(hi))
}

var wrkTotal = regexp.MustCompile(`(\d+) requests in`)

func wrkRequests(out []byte, _ string) (sample, error) {
	m := wrkTotal.FindSubmatch(out)
	if m == nil {
		return sample{}, errors.New("no request count in wrk's output")
	}
	n, err := strconv.ParseInt(string(m[1]), 10, 64)
	return sample{requests: n}, err
}

// vegetaAttack is vegeta's open run at rate with conns connections and as
// many workers at most (loadtest's -c is both), writing its results to "@".
func vegetaAttack(vegeta, targets, rate, conns, d string) []string {
	return []string{vegeta, "attack", "-targets", targets, "-rate", rate + "/1s", "-duration", d,
		"-connections", conns, "-max-connections", conns, "-max-workers", conns, "-output", "@"}
}

// vegetaResults reads vegeta's results file (through `vegeta encode`, which
// runs after the attack and so outside its CPU time): the requests made and
// their lateness. Hit seq is due at seq/rate after the attack's start,
// which the results do not give; it is taken as the latest start that makes
// no hit early, so the lateness is a lower bound.
func vegetaResults(vegeta string, rate float64) func([]byte, string) (sample, error) {
	return func(_ []byte, file string) (sample, error) {
		out, err := exec.Command(vegeta, "encode", "-to", "csv", file).Output()
		if err != nil {
			return sample{}, fmt.Errorf("vegeta encode: %w", err)
		}
		r := csv.NewReader(bytes.NewReader(out))
		r.FieldsPerRecord = -1
		recs, err := r.ReadAll()
		if err != nil {
			return sample{}, fmt.Errorf("vegeta encode: %w", err)
		}
		// Columns: timestamp (Unix ns), code, latency, bytes out, bytes in,
		// error, body, attack, seq, ...
		offs := make([]float64, 0, len(recs)) // seconds: start minus seq/rate
		var failed int
		for _, rec := range recs {
			if len(rec) < 9 {
				return sample{}, fmt.Errorf("vegeta encode: a line of %d fields", len(rec))
			}
			ts, err1 := strconv.ParseInt(rec[0], 10, 64)
			seq, err2 := strconv.ParseInt(rec[8], 10, 64)
			if err1 != nil || err2 != nil {
				return sample{}, fmt.Errorf("vegeta encode: malformed line %q", rec)
			}
			if rec[1] != "200" {
				failed++
			}
			offs = append(offs, float64(ts)/1e9-float64(seq)/rate)
		}
		if len(offs) == 0 {
			return sample{}, errors.New("vegeta made no request")
		}
		if failed > 0 {
			return sample{}, fmt.Errorf("vegeta: %d of %d requests failed", failed, len(offs))
		}
		slices.Sort(offs)
		at := func(q float64) float64 { return offs[int(q*float64(len(offs)-1))] - offs[0] }
		return sample{requests: int64(len(offs)), lag: &report.Latency{P50: at(0.5), P99: at(0.99), Max: at(1)}}, nil
	}
}

func loadtestRequests(_ []byte, jsonFile string) (sample, error) {
	f, err := os.Open(jsonFile)
	if err != nil {
		return sample{}, err
	}
	defer f.Close()
	rep, err := report.Read(f)
	if err != nil {
		return sample{}, fmt.Errorf("reading %s: %w", jsonFile, err)
	}
	if len(rep.Runs) != 1 {
		return sample{}, fmt.Errorf("%s: %d runs, want 1", jsonFile, len(rep.Runs))
	}
	r := rep.Runs[0]
	s := sample{requests: r.Sent}
	if r.Settings.Mode == "open" {
		s.lag = r.Latency.SchedulerLag
	}
	return s, nil
}
