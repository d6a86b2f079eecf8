package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/orderlab/orderlab/internal/cli"
	"github.com/orderlab/orderlab/internal/dbfault"
	"github.com/orderlab/orderlab/lab/faults"
)

const faultsUsage = `usage: lab faults [flags]

Measures what the services do when their database fails (docs/reference/database-failures.md): for each fault and service, the service from -bin against a
throwaway Postgres cluster (initdb and pg_ctl from the installed PostgreSQL),
-rate keyed orders a second, the fault injected and lifted, and every answer
held to the table. Prints one Markdown table per fault. Exit status 1 when an
acknowledged order is missing, an order is stored twice or despite a "not
stored" answer, or an answer is a 500.

faults: %s

flags:
`

// faultsPlan is a parsed faults subcommand.
type faultsPlan struct {
	cfg faults.Config
}

func parseFaultsCmd(args []string, stderr io.Writer) (*faultsPlan, error) {
	fs := flag.NewFlagSet("lab faults", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintf(stderr, faultsUsage, faultNames()); fs.PrintDefaults() }
	p := &faultsPlan{}
	c := &p.cfg
	var services, only string
	fs.StringVar(&c.BinDir, "bin", "bin", "directory of the built services (make build)")
	fs.StringVar(&services, "services", "unbounded,semaphore,pipeline", "services to run, comma-separated")
	fs.StringVar(&only, "faults", "all", "faults to inject, comma-separated, or all")
	fs.IntVar(&c.Rate, "rate", 100, "keyed orders per second")
	fs.DurationVar(&c.Before, "before", 3*time.Second, "load before the fault")
	fs.DurationVar(&c.After, "after", 5*time.Second, "load after the fault ends")
	timeout := fs.Duration("request-timeout", 5*time.Second, "the services' REQUEST_TIMEOUT: how long a request may hang on a silent network")
	fs.StringVar(&c.LogDir, "logs", filepath.Join(os.TempDir(), "orderlab-faults"), "directory for the services' logs")
	pos, _, err := cli.ParseInterleaved(fs, args)
	if err != nil {
		return nil, err
	}
	if len(pos) > 0 {
		return nil, cli.Usagef("", "unexpected argument %q", pos[0])
	}
	if c.Rate < 1 {
		return nil, cli.Usagef("rate", "must be at least 1")
	}
	if c.Services = strings.Split(services, ","); services == "" {
		return nil, cli.Usagef("services", "name at least one service")
	}
	if only == "all" {
		c.Faults = dbfault.Catalog
	} else {
		for _, name := range strings.Split(only, ",") {
			f, ok := dbfault.Named(name)
			if !ok {
				return nil, cli.Usagef("faults", "unknown fault %q", name)
			}
			c.Faults = append(c.Faults, f)
		}
	}
	c.Env = map[string]string{"REQUEST_TIMEOUT": timeout.String()}
	return p, nil
}

// faultNames lists the catalog's faults (internal/dbfault).
func faultNames() string {
	names := make([]string, len(dbfault.Catalog))
	for i, f := range dbfault.Catalog {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}

func (p *faultsPlan) execute(ctx context.Context, stdout, stderr io.Writer) int {
	p.cfg.Progress = stderr
	start := time.Now()
	rs, err := faults.Run(ctx, p.cfg)
	if werr := faults.WriteMarkdown(stdout, rs, p.cfg.Faults, p.cfg); werr != nil && err == nil {
		err = werr
	}
	fmt.Fprintf(stdout, "\n%d run(s) in %s; service logs in %s\n", len(rs), time.Since(start).Round(time.Second), p.cfg.LogDir)
	if err != nil {
		fmt.Fprintf(stderr, "lab faults: %v\n", err)
		return cli.ExitFail
	}
	for _, r := range rs {
		if !r.OK() {
			fmt.Fprintf(stderr, "lab faults: %s under %s: the table contradicts an answer, or a 500\n", r.Service, r.Fault)
			return cli.ExitFail
		}
	}
	return cli.ExitOK
}
