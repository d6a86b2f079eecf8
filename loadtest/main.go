// Command loadtest is orderlab's load generator: a black-box HTTP client that
// puts any HTTP service under load (burst, closed loop,
// coordinated-omission-correct open loop, a comparison of several targets)
// and reports client- and server-side figures; merge joins the reports of
// several generators of one load. See loadtest/README.md. The lab around it
// (scenarios, the front page, the lab's daemons) is the lab command, lab/.
//
// Each subcommand is parsed whole (flags, arguments and environment) into a
// plan of plain values first, then the plan runs: loadcmd.go for burst,
// closed, open and compare, mergecmd.go for merge; forward.go runs the modes
// that moved to the lab command.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/orderlab/orderlab/internal/cli"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

const usage = `usage: loadtest <mode> [flags] URL

modes:
  burst    -n 1000 URL             N requests released at once, after a warm-up round
  closed   -c 500 -d 30s URL       C workers in request loops (like wrk -c)
  open     -rate 2000 -d 30s URL   constant arrival rate, coordinated-omission corrected
  compare  -mode closed ... [name=URL ...]
                                   the same load against several targets, one table
  merge    A.json B.json ...       the reports of several generators of one load, merged

"loadtest <mode> -h" lists a mode's flags. Exit status: 0 ok, 1 failed or SLO
missed, 2 usage error.

scenario, front, background, dbproxy and faults are the lab command's now
("lab -h"); loadtest still runs them, through the lab binary beside it.
`

// run is the whole program: it parses args and the environment (getenv)
// into a plan, runs it until it ends or SIGINT/SIGTERM arrives, writes the
// results and returns the exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return cli.ExitUsage
	}
	switch mode, rest := args[0], args[1:]; mode {
	case "burst", "closed", "open", "compare":
		p, err := parseLoad(mode, rest, getenv, stderr)
		if err != nil {
			return cli.ParseFailed("loadtest", mode, err, stderr)
		}
		return p.execute(ctx, stdout, stderr)
	case "merge":
		p, err := parseMerge(rest, stderr)
		if err != nil {
			return cli.ParseFailed("loadtest", mode, err, stderr)
		}
		return p.execute(ctx, stdout, stderr)
	case "scenario", "front", "background", "dbproxy", "faults":
		return forwardToLab(ctx, mode, rest, stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return cli.ExitOK
	default:
		fmt.Fprintf(stderr, "loadtest: unknown mode %q\n\n%s", mode, usage)
		return cli.ExitUsage
	}
}
