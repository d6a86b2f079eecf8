package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/orderlab/orderlab/internal/cli"
	"github.com/orderlab/orderlab/loadtest/report"
)

const mergeUsage = `usage: loadtest merge [flags] A.json B.json ...

Merges the JSON reports (-json) that several generators wrote of the same
load into one, exactly: histograms merged bucket by bucket, counts summed,
the time window the union of theirs. Each target's runs are matched by name.
Runs of different modes, paths, schedules (rate, ramp, duration, shard
count), timeouts or retry policies are refused. Shards of one open schedule
(-shard i/n) merge into the whole schedule.

flags:
`

// mergePlan is a parsed merge subcommand: the reports to merge and where
// the merged report goes.
type mergePlan struct {
	files []string
	out   output
}

// parseMerge reads the merge subcommand's command line into a plan.
func parseMerge(args []string, stderr io.Writer) (*mergePlan, error) {
	fs := flag.NewFlagSet("loadtest merge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, mergeUsage); fs.PrintDefaults() }
	p := &mergePlan{}
	fs.StringVar(&p.out.json, "json", "", "write the merged report to `FILE` (- for stdout)")
	fs.BoolVar(&p.out.markdown, "md", false, "print a Markdown table instead of the human output")
	fs.StringVar(&p.out.html, "html", "", "also write the summary table as an HTML page to `FILE`")
	files, _, err := cli.ParseInterleaved(fs, args)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, cli.Usagef("", "want the JSON reports to merge (written with -json)")
	}
	if p.out.json == "-" && p.out.markdown {
		return nil, cli.Usagef("md", "cannot share stdout with -json -")
	}
	p.files = files
	return p, nil
}

// execute reads, merges and writes. An input that cannot be read or merged
// is a usage error (exit 2), a failed write a failure (exit 1).
func (p *mergePlan) execute(_ context.Context, stdout, stderr io.Writer) int {
	reps := make([]*report.Report, len(p.files))
	for i, name := range p.files {
		rep, err := readInput(name)
		if err != nil {
			fmt.Fprintf(stderr, "loadtest merge: %s: %v\n", name, err)
			return cli.ExitUsage
		}
		reps[i] = rep
	}
	merged, notes, err := report.MergeReports(reps, p.files)
	if err != nil {
		fmt.Fprintf(stderr, "loadtest merge: cannot merge: %v\n", err)
		return cli.ExitUsage
	}
	for _, n := range notes {
		fmt.Fprintf(stderr, "loadtest merge: note: %s\n", n)
	}
	if err := p.out.write(merged, stdout); err != nil {
		fmt.Fprintf(stderr, "loadtest merge: %v\n", err)
		return cli.ExitFail
	}
	return cli.ExitOK
}

func readInput(name string) (*report.Report, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return report.Read(f)
}
