package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// Exit codes.
const (
	exitOK    = 0 // every run finished and met its SLO
	exitFail  = 1 // a run failed, was interrupted or missed its SLO
	exitUsage = 2 // bad flags, URLs or durations
)

const usage = `usage: loadtest <mode> [flags] URL

modes:
  burst    -n 1000 URL             N requests released at once, after a warm-up round
  closed   -c 500 -d 30s URL       C workers in request loops (like wrk -c)
  open     -rate 2000 -d 30s URL   constant arrival rate, coordinated-omission corrected
  compare  -mode closed ... [name=URL ...]
                                   the same load against several targets, one table
  scenario [-quick] NAME... | all  scenarios of the catalog (loadtest/scenario/catalog),
                                   with JSON, Markdown and HTML results

"loadtest <mode> -h" lists a mode's flags. Exit status: 0 ok, 1 failed or SLO
missed, 2 usage error.
`

// run is the whole program: it parses args, runs the mode, writes the
// results and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	mode, rest := args[0], args[1:]
	var cmd *command
	switch mode {
	case "burst", "closed", "open":
		cmd = newCommand(mode, false)
	case "compare":
		cmd = newCommand(mode, true)
	case "scenario":
		return runScenario(ctx, rest, stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	default:
		fmt.Fprintf(stderr, "loadtest: unknown mode %q\n\n%s", mode, usage)
		return exitUsage
	}
	cmd.fs.SetOutput(stderr)
	plan, err := cmd.parse(rest)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		var ue usageError
		if errors.As(err, &ue) {
			fmt.Fprintf(stderr, "loadtest %s: %v\n(see loadtest %s -h)\n", mode, err, mode)
		}
		return exitUsage
	}
	if isTerminal(stderr) {
		plan.progress = stderr
	}
	return plan.execute(ctx, append([]string{mode}, rest...), stdout, stderr)
}

// usageError is a problem with the command line; it names the flag.
type usageError struct {
	flag string
	msg  string
}

func (e usageError) Error() string {
	if e.flag == "" {
		return e.msg
	}
	return "-" + e.flag + ": " + e.msg
}

func usagef(flag, format string, args ...any) error {
	return usageError{flag: flag, msg: fmt.Sprintf(format, args...)}
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// parseInterleaved parses flags that may come before or after positional
// arguments ("open URL -rate 10" and "open -rate 10 URL").
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// nameURLFlag is a repeatable flag.Func that reads "name=URL" into m.
func nameURLFlag(m map[string]string) func(string) error {
	return func(s string) error {
		name, u, ok := strings.Cut(s, "=")
		if !ok || name == "" || u == "" {
			return fmt.Errorf("want name=URL, got %q", s)
		}
		m[name] = u
		return nil
	}
}
