// Command loadtest is orderlab's load generator: a black-box HTTP client that
// reproduces the experiments of README.md (The pitfalls) against the three
// services (burst, closed loop, coordinated-omission-correct open loop, a
// comparison of several targets, and the scenario catalog), and reports
// client- and server-side figures. It also runs the lab's background load
// (background). See loadtest/README.md.
//
// Each subcommand is parsed whole (flags, arguments and environment) into a
// plan of plain values first, then the plan runs: loadcmd.go for burst,
// closed, open and compare, scenariocmd.go for scenario, backgroundcmd.go
// for background, frontcmd.go for front, mergecmd.go for merge, faultscmd.go for faults.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// Exit codes.
const (
	exitOK    = 0 // every run finished and met its SLO
	exitFail  = 1 // a run failed, was interrupted or missed its SLO
	exitUsage = 2 // bad flags, URLs, durations or environment
)

const usage = `usage: loadtest <mode> [flags] URL

modes:
  burst    -n 1000 URL             N requests released at once, after a warm-up round
  closed   -c 500 -d 30s URL       C workers in request loops (like wrk -c)
  open     -rate 2000 -d 30s URL   constant arrival rate, coordinated-omission corrected
  compare  -mode closed ... [name=URL ...]
                                   the same load against several targets, one table
  scenario [-quick] NAME... | all  scenarios of the catalog (lab/scenario/catalog),
                                   with JSON, Markdown and HTML results
  background -rate 4 name=URL...   the lab's gentle, endless background mix, until stopped
  front    [-listen 127.0.0.1:8080]  the lab's front page: pick a scenario, run it in the lab,
                                   watch it, read its verdicts (docs/front-page.md)
  merge    A.json B.json ...       the reports of several generators of one load, merged
  faults   [-faults restart,...]   the database fails under load: the README's
                                   reliability tables (make faults)
  dbproxy  [-listen :5432]         the lab's database fault proxy with its control API

"loadtest <mode> -h" lists a mode's flags. Exit status: 0 ok, 1 failed or SLO
missed, 2 usage error (scenario: 1 an expectation missed, 2 a scenario that
could not run to its end).
`

// run is the whole program: it parses args and the environment (getenv)
// into a plan, runs it until it ends or SIGINT/SIGTERM arrives, writes the
// results and returns the exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	switch mode, rest := args[0], args[1:]; mode {
	case "burst", "closed", "open", "compare":
		p, err := parseLoad(mode, rest, getenv, stderr)
		if err != nil {
			return parseFailed(mode, err, stderr)
		}
		return p.execute(ctx, stdout, stderr)
	case "scenario":
		p, err := parseScenarioCmd(rest, getenv, stderr)
		if err != nil {
			return parseFailed(mode, err, stderr)
		}
		return p.execute(ctx, stdout, stderr)
	case "background":
		p, err := parseBackground(rest, getenv, stderr)
		if err != nil {
			return parseFailed(mode, err, stderr)
		}
		return p.execute(ctx, stdout, stderr)
	case "front":
		p, err := parseFront(rest, getenv, stderr)
		if err != nil {
			return parseFailed(mode, err, stderr)
		}
		return p.execute(ctx, stdout, stderr)
	case "merge":
		p, err := parseMerge(rest, stderr)
		if err != nil {
			return parseFailed(mode, err, stderr)
		}
		return p.execute(ctx, stdout, stderr)
	case "faults":
		p, err := parseFaultsCmd(rest, stderr)
		if err != nil {
			return parseFailed(mode, err, stderr)
		}
		return p.execute(ctx, stdout, stderr)
	case "dbproxy":
		p, err := parseDBProxy(rest, stderr)
		if err != nil {
			return parseFailed(mode, err, stderr)
		}
		return p.execute(ctx, stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	default:
		fmt.Fprintf(stderr, "loadtest: unknown mode %q\n\n%s", mode, usage)
		return exitUsage
	}
}
