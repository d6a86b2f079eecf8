// Command benchwrk measures loadtest's efficiency against wrk: both run in
// closed mode against the same trivial local endpoint, each pinned to the
// same CPU, and the figure is requests per client CPU-second (user + system
// time of the client process, so it does not depend on how fast the server
// is). `make bench-loadtest` runs it.
package main

import (
	"bytes"
	"context"
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
	"text/tabwriter"
	"time"

	"github.com/orderlab/orderlab/loadtest/report"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
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
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *conns < 1 || *dur <= 0 || *rounds < 1 {
		fmt.Fprintln(stderr, "benchwrk: -c, -d and -rounds must be positive")
		return 2
	}
	if _, err := exec.LookPath("wrk"); err != nil {
		fmt.Fprintln(stderr, "benchwrk: wrk is not installed (apt-get install wrk)")
		return 1
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
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	url := "http://" + ln.Addr().String() + "/"

	d := strconv.Itoa(int(dur.Seconds())) + "s"
	c := strconv.Itoa(*conns)
	clients := []struct {
		name string
		argv []string
		read func(out []byte, jsonFile string) (int64, error)
	}{
		{"wrk -t1", []string{"wrk", "-t1", "-c" + c, "-d" + d, url}, wrkRequests},
		{"loadtest (fast)", []string{*loadtest, "closed", "-c", c, "-d", d, "-json", "@", url}, loadtestRequests},
		{"loadtest (net/http)", []string{*loadtest, "closed", "-client", "net/http", "-c", c, "-d", d, "-json", "@", url}, loadtestRequests},
	}
	tmp, err := os.MkdirTemp("", "benchwrk")
	if err != nil {
		fmt.Fprintln(stderr, "benchwrk:", err)
		return 1
	}
	defer os.RemoveAll(tmp)

	fmt.Fprintf(stdout, "closed loop, %s connections, %s per run, median of %d runs; clients pinned to CPU %q, server elsewhere\n\n", c, d, *rounds, *cpu)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "client\trequests\tCPU-seconds\trequests per CPU-second\tvs wrk\t")
	var wrk float64
	for _, cl := range clients {
		var rates []float64
		var reqs int64
		var cpus float64
		for i := range *rounds {
			jsonFile := fmt.Sprintf("%s/run-%d.json", tmp, i)
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
				fmt.Fprintf(stderr, "benchwrk: %s: %v\n%s", cl.name, err, out.Bytes())
				return 1
			}
			n, err := cl.read(out.Bytes(), jsonFile)
			if err != nil {
				fmt.Fprintf(stderr, "benchwrk: %s: %v\n%s", cl.name, err, out.Bytes())
				return 1
			}
			cpu := (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
			rates = append(rates, float64(n)/cpu)
			reqs, cpus = n, cpu
		}
		slices.Sort(rates)
		med := rates[len(rates)/2]
		if wrk == 0 {
			wrk = med
		}
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.0f\t%.2fx\t\n", cl.name, reqs, cpus, med, med/wrk)
	}
	_ = tw.Flush()
	fmt.Fprintln(stdout, "\n(requests and CPU-seconds are from the last run; the rate is the median)")
	return 0
}

var wrkTotal = regexp.MustCompile(`(\d+) requests in`)

func wrkRequests(out []byte, _ string) (int64, error) {
	m := wrkTotal.FindSubmatch(out)
	if m == nil {
		return 0, errors.New("no request count in wrk's output")
	}
	return strconv.ParseInt(string(m[1]), 10, 64)
}

func loadtestRequests(_ []byte, jsonFile string) (int64, error) {
	f, err := os.Open(jsonFile)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	rep, err := report.Read(f)
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", jsonFile, err)
	}
	if len(rep.Runs) != 1 {
		return 0, fmt.Errorf("%s: %d runs, want 1", jsonFile, len(rep.Runs))
	}
	return rep.Runs[0].Sent, nil
}
