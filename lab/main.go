// Command lab runs orderlab's lab around the load generator (loadtest): the
// scenario catalog, run on local processes or on the running compose
// lab, with JSON, Markdown and HTML results; the front page, where a user
// picks a scenario and reads its verdicts; and the lab's daemons, its
// background load and its database fault proxy; the database fault runs
// behind the README's reliability tables; and the diagnosis, which pitfall
// a Prometheus sees. See lab/README.md.
//
// Each subcommand is parsed whole (flags, arguments and environment) into a
// plan of plain values first, then the plan runs: scenariocmd.go for
// scenario, frontcmd.go for front, backgroundcmd.go for background,
// dbproxycmd.go for dbproxy, faultscmd.go for faults, diagnosecmd.go for
// diagnose; running.go points a run at the running lab.
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

const usage = `usage: lab <mode> [flags]

modes:
  scenario [-quick] NAME... | all  scenarios of the catalog (lab/scenario/catalog),
                                   with JSON, Markdown and HTML results
  front    [-listen 127.0.0.1:8080]  the lab's front page: pick a scenario, run it in the lab,
                                   watch it, read its verdicts (docs/front-page.md)
  background -rate 4 name=URL...   the lab's gentle, endless background mix, until stopped
  dbproxy  [-listen :5432]         the lab's database fault proxy with its control API
  faults   [-faults restart,...]   the database fails under load: the README's
                                   reliability tables (make faults)
  diagnose [-prometheus URL] [-json]  which pitfall Prometheus sees now: its
                                   pitfall alerts firing, with their evidence

"lab <mode> -h" lists a mode's flags. Exit status: 0 ok, 1 failed (scenario:
an expectation missed; diagnose: a pitfall fires), 2 usage error (scenario:
a scenario that could not run to its end; diagnose: Prometheus could not
be asked).
`

// run is the whole program: it parses args and the environment (getenv)
// into a plan, runs it until it ends or SIGINT/SIGTERM arrives, and returns
// the exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return cli.ExitUsage
	}
	// plan is a parsed mode, ready to run.
	type plan interface {
		execute(ctx context.Context, stdout, stderr io.Writer) int
	}
	var p plan
	var err error
	switch mode, rest := args[0], args[1:]; mode {
	case "scenario":
		p, err = parseScenarioCmd(rest, getenv, stderr)
	case "front":
		p, err = parseFront(rest, getenv, stderr)
	case "background":
		p, err = parseBackground(rest, getenv, stderr)
	case "dbproxy":
		p, err = parseDBProxy(rest, stderr)
	case "faults":
		p, err = parseFaultsCmd(rest, stderr)
	case "diagnose":
		p, err = parseDiagnose(rest, getenv, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return cli.ExitOK
	default:
		fmt.Fprintf(stderr, "lab: unknown mode %q\n\n%s", mode, usage)
		return cli.ExitUsage
	}
	if err != nil {
		return cli.ParseFailed("lab", args[0], err, stderr)
	}
	return p.execute(ctx, stdout, stderr)
}
