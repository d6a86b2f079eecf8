package app

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/orderlab/orderlab/internal/pgdb"
)

// Env reads typed settings from the environment. Every problem is collected,
// so that one start-up reports every bad variable at once, each naming the
// variable and the values it accepts.
type Env struct {
	getenv   func(string) string
	errs     []error
	settings []setting
}

type setting struct{ name, value string }

// NewEnv reads from getenv (os.Getenv in main, a map in tests).
func NewEnv(getenv func(string) string) *Env { return &Env{getenv: getenv} }

// String returns name's value or def.
func (e *Env) String(name, def string) string {
	v := e.getenv(name)
	if v == "" {
		v = def
	}
	e.record(name, v)
	return v
}

// DSN is String for a Postgres connection string: the log shows only
// where it points (pgdb.Describe), never a password, in either form.
func (e *Env) DSN(name, def string) string {
	v := e.getenv(name)
	if v == "" {
		v = def
	}
	e.record(name, pgdb.Describe(v))
	return v
}

// Int returns name's value or def, which must lie in [lo, hi].
func (e *Env) Int(name string, def, lo, hi int) int {
	s := e.getenv(name)
	if s == "" {
		e.record(name, strconv.Itoa(def))
		return def
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < lo || n > hi {
		e.errs = append(e.errs, fmt.Errorf("%s=%q: want an integer from %d to %d", name, s, lo, hi))
		return def
	}
	e.record(name, strconv.Itoa(n))
	return n
}

// IntOr is Int for a setting that also takes one word: it returns true when
// name's value is that word, and name's integer value (or def) otherwise.
func (e *Env) IntOr(name, word string, def, lo, hi int) (int, bool) {
	if strings.TrimSpace(e.getenv(name)) == word {
		e.record(name, word)
		return 0, true
	}
	n := e.Int(name, def, lo, hi)
	if k := len(e.errs); k > 0 && strings.HasPrefix(e.errs[k-1].Error(), name+"=") {
		e.errs[k-1] = fmt.Errorf("%w, or %s", e.errs[k-1], word)
	}
	return n, false
}

// Duration returns name's value or def, which must lie in [lo, hi].
func (e *Env) Duration(name string, def, lo, hi time.Duration) time.Duration {
	s := e.getenv(name)
	if s == "" {
		e.record(name, def.String())
		return def
	}
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil || d < lo || d > hi {
		e.errs = append(e.errs, fmt.Errorf("%s=%q: want a duration from %s to %s, such as 100ms", name, s, lo, hi))
		return def
	}
	e.record(name, d.String())
	return d
}

// OneOf returns name's value or def, which must be one of allowed.
func (e *Env) OneOf(name, def string, allowed ...string) string {
	v := e.getenv(name)
	if v == "" {
		v = def
	}
	for _, a := range allowed {
		if v == a {
			e.record(name, v)
			return v
		}
	}
	e.errs = append(e.errs, fmt.Errorf("%s=%q: want one of %s", name, v, strings.Join(allowed, ", ")))
	return def
}

// Fail records a problem found while checking settings against each other.
func (e *Env) Fail(format string, args ...any) { e.errs = append(e.errs, fmt.Errorf(format, args...)) }

// Err returns every problem found so far, or nil.
func (e *Env) Err() error { return errors.Join(e.errs...) }

// LogAttrs returns the settings read, secrets masked, for the start-up log.
func (e *Env) LogAttrs() []any {
	out := make([]any, 0, 2*len(e.settings))
	for _, s := range e.settings {
		out = append(out, s.name, s.value)
	}
	return out
}

func (e *Env) record(name, value string) { e.settings = append(e.settings, setting{name, value}) }
