// Package cli is what loadtest's and lab's commands share on the command
// line: their exit codes, a usage error that names its flag, flags that may
// come before or after the positional arguments, and name=URL flags.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// Exit codes of both commands.
const (
	ExitOK    = 0 // every run finished and met its SLO
	ExitFail  = 1 // a run failed, was interrupted or missed its SLO
	ExitUsage = 2 // bad flags, URLs, durations or environment
)

// Service is one of the three services as `make run` serves them.
type Service struct{ Name, URL, Metrics string }

// LocalServices are the three services on `make run`'s ports, which the
// compose lab publishes too: loadtest compare's targets when none is
// named, and the lab's seen from the host.
var LocalServices = []Service{
	{Name: "unbounded", URL: "http://127.0.0.1:8081", Metrics: "http://127.0.0.1:9091/metrics"},
	{Name: "semaphore", URL: "http://127.0.0.1:8082", Metrics: "http://127.0.0.1:9092/metrics"},
	{Name: "pipeline", URL: "http://127.0.0.1:8083", Metrics: "http://127.0.0.1:9093/metrics"},
}

// UsageError is a problem with a flag or an argument; it names the flag.
// ParseFailed prints it with a pointer to the mode's -h.
type UsageError struct {
	Flag string // "" for a positional argument
	Msg  string
}

func (e UsageError) Error() string {
	if e.Flag == "" {
		return e.Msg
	}
	return "-" + e.Flag + ": " + e.Msg
}

// Usagef is a UsageError of flag ("" for a positional argument).
func Usagef(flag, format string, args ...any) error {
	return UsageError{Flag: flag, Msg: fmt.Sprintf(format, args...)}
}

// FlagParseError is an error of the flag package, which has already
// printed the problem and the usage.
type FlagParseError struct{ Err error }

func (e FlagParseError) Error() string { return e.Err.Error() }
func (e FlagParseError) Unwrap() error { return e.Err }

// ParseFailed reports a parse error of prog's mode and returns the exit
// code: ExitOK for -h, ExitUsage for everything else.
func ParseFailed(prog, mode string, err error, stderr io.Writer) int {
	var ue UsageError
	var fe FlagParseError
	switch {
	case errors.Is(err, flag.ErrHelp):
		return ExitOK
	case errors.As(err, &fe):
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "%s %s: %v\n(see %s %s -h)\n", prog, mode, err, prog, mode)
	default:
		fmt.Fprintf(stderr, "%s %s: %v\n", prog, mode, err)
	}
	return ExitUsage
}

// ParseInterleaved parses flags that may come before or after positional
// arguments ("open URL -rate 10" and "open -rate 10 URL"), and returns the
// positional arguments and the names of the flags given.
func ParseInterleaved(fs *flag.FlagSet, args []string) (pos []string, set map[string]bool, err error) {
	for {
		if err := fs.Parse(args); err != nil {
			return nil, nil, FlagParseError{err}
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return pos, set, nil
}

// NameURLFlag is a repeatable flag.Func that reads "name=URL" into m.
func NameURLFlag(m map[string]string) func(string) error {
	return func(s string) error {
		name, u, ok := strings.Cut(s, "=")
		if !ok || name == "" || u == "" {
			return fmt.Errorf("want name=URL, got %q", s)
		}
		m[name] = u
		return nil
	}
}

// IsTerminal reports whether w is a character device (a terminal).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
