package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// usageError is a problem with a flag or an argument; it names the flag.
// run prints it with a pointer to the mode's -h.
type usageError struct {
	flag string // "" for a positional argument
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

// flagParseError is an error of the flag package, which has already printed
// the problem and the usage.
type flagParseError struct{ err error }

func (e flagParseError) Error() string { return e.err.Error() }
func (e flagParseError) Unwrap() error { return e.err }

// parseFailed reports a parse error of mode and returns the exit code: 0
// for -h, 2 for everything else.
func parseFailed(mode string, err error, stderr io.Writer) int {
	var ue usageError
	var fe flagParseError
	switch {
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.As(err, &fe):
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "loadtest %s: %v\n(see loadtest %s -h)\n", mode, err, mode)
	default:
		fmt.Fprintf(stderr, "loadtest %s: %v\n", mode, err)
	}
	return exitUsage
}

// parseInterleaved parses flags that may come before or after positional
// arguments ("open URL -rate 10" and "open -rate 10 URL"), and returns the
// positional arguments and the names of the flags given.
func parseInterleaved(fs *flag.FlagSet, args []string) (pos []string, set map[string]bool, err error) {
	for {
		if err := fs.Parse(args); err != nil {
			return nil, nil, flagParseError{err}
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

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
