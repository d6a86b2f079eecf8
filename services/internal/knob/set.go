package knob

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Source is where a knob's value came from.
type Source string

const (
	FromDefault     Source = "default"
	FromEnvironment Source = "environment"
	FromRuntime     Source = "runtime"
)

type entry struct {
	v   Value
	src Source
}

// Set is the value of every knob that applies to one model. A Set does not
// change: a change makes a new Set (With), which the caller swaps in.
type Set struct {
	model string
	vals  map[string]entry
	// start is every knob as the service started (FromEnv), shared by the
	// sets a change makes: a change to "" puts a knob back to it.
	start map[string]entry
}

// Error is what is wrong with one knob's value.
type Error struct {
	Knob   string
	Value  string // as given; empty for a secret or a DSN
	Reason string
}

func (e *Error) Error() string {
	if e.Value == "" {
		return e.Knob + ": " + e.Reason
	}
	return fmt.Sprintf("%s=%q: %s", e.Knob, e.Value, e.Reason)
}

// FromEnv reads every knob of model from getenv. The error joins one
// *Error per bad variable, each naming it and the values it accepts, so
// that one start-up reports them all.
func FromEnv(model string, getenv func(string) string) (*Set, error) {
	s := &Set{model: model, vals: map[string]entry{}}
	var errs []error
	for _, k := range All {
		if !k.AppliesTo(model) {
			continue
		}
		raw := getenv(k.Name)
		if raw == "" {
			continue // defaults below, once every knob they follow is read
		}
		v, err := k.Parse(raw)
		if err != nil {
			errs = append(errs, k.fail(raw, err.Error()))
			continue
		}
		s.vals[k.Name] = entry{v, FromEnvironment}
	}
	for _, k := range All {
		if _, ok := s.vals[k.Name]; !ok && k.AppliesTo(model) {
			s.vals[k.Name] = entry{s.defaultOf(k), FromDefault}
		}
	}
	errs = append(errs, s.check(nil)...)
	s.start = maps.Clone(s.vals)
	return s, errors.Join(errs...)
}

// defaultOf is k's default: its Default, or the value of DefaultFrom. A
// default need not lie in the range (HTTP_HANDLER_POOL's 0 is nbio's own).
func (s *Set) defaultOf(k Knob) Value {
	if k.DefaultFrom != "" {
		v := s.vals[k.DefaultFrom].v
		v.Word = false
		return v
	}
	switch k.Kind {
	case Int:
		n, _ := strconv.Atoi(k.Default)
		return Value{Text: k.Default, Int: n}
	case Duration:
		d, _ := time.ParseDuration(k.Default)
		return Value{Text: d.String(), Dur: d}
	case Bool:
		if k.Default == "true" {
			return Value{Text: "true", Int: 1}
		}
		return Value{Text: "false"}
	}
	return Value{Text: k.Default}
}

func (k Knob) fail(raw, reason string) *Error {
	if k.Kind == DSN || k.Kind == Secret {
		raw = ""
	}
	return &Error{Knob: k.Name, Value: raw, Reason: reason}
}

// check holds the knobs to each other. With changed set, only rules that
// involve a changed knob are reported, each under a changed knob's name.
func (s *Set) check(changed map[string]bool) []error {
	var errs []error
	rule := func(a, b string, ok bool, reason string) {
		if ok || !s.has(a) || !s.has(b) {
			return
		}
		name := a
		if changed != nil && !changed[a] {
			if !changed[b] {
				return
			}
			name = b
		}
		k, _ := Lookup(name)
		errs = append(errs, k.fail(s.Text(name), reason))
	}
	maxConns := s.Int("DB_MAX_CONNS")
	rule("DB_MIN_CONNS", "DB_MAX_CONNS", s.Int("DB_MIN_CONNS") <= maxConns,
		fmt.Sprintf("DB_MIN_CONNS (%d) must be at most DB_MAX_CONNS (%d)", s.Int("DB_MIN_CONNS"), maxConns))
	rule("HTTP_HANDLER_POOL", "HTTP_SERVER", s.Int("HTTP_HANDLER_POOL") == 0 || s.Text("HTTP_SERVER") == "nbio",
		"only HTTP_SERVER=nbio has a handler pool")
	rule("LIMIT_MIN", "LIMIT_MAX", s.Int("LIMIT_MIN") <= s.Int("LIMIT_MAX"),
		fmt.Sprintf("LIMIT_MIN (%d) must be at most LIMIT_MAX (%d)", s.Int("LIMIT_MIN"), s.Int("LIMIT_MAX")))
	rule("WORKERS", "DB_MAX_CONNS", s.Int("WORKERS") <= maxConns,
		fmt.Sprintf("WORKERS (%d) must be at most DB_MAX_CONNS (%d); extra workers would only wait for the pool",
			s.Int("WORKERS"), maxConns))
	return errs
}

func (s *Set) has(name string) bool { _, ok := s.vals[name]; return ok }

// Problem kinds of a change (Set.With).
var (
	ErrUnknown = errors.New("unknown knob")
	ErrRestart = errors.New("restart-only knob")
)

// ChangeError is a refused change: every bad knob in Errors, with Unknown
// and Restart listing unknown and restart-only knobs.
type ChangeError struct {
	Unknown []string // not a knob of this model
	Restart []string // declared restart-only
	Invalid []*Error // a value out of range, or at odds with another knob
}

func (e *ChangeError) Error() string {
	var parts []error
	for _, n := range e.Unknown {
		parts = append(parts, fmt.Errorf("%s: %w", n, ErrUnknown))
	}
	for _, n := range e.Restart {
		k, _ := Lookup(n)
		parts = append(parts, fmt.Errorf("%s: %w: %s", n, ErrRestart, k.Restart))
	}
	for _, err := range e.Invalid {
		parts = append(parts, err)
	}
	return errors.Join(parts...).Error()
}

// With returns s with changes (knob name to value, in the environment's
// syntax) applied, their source runtime, and the names whose value
// differs; or a *ChangeError naming every knob at fault, and nothing
// changed. An empty value puts a knob back as the service started: its
// environment value, or its default. A knob whose default is another
// knob's value (WORKERS and LIMIT follow DB_MAX_CONNS) keeps following it
// until it is set, so a change of the pool is never refused for a knob
// nobody set; such a knob that moves is among the names returned.
func (s *Set) With(changes map[string]string) (*Set, []string, error) {
	next := &Set{model: s.model, vals: maps.Clone(s.vals), start: s.start}
	var ce ChangeError
	for _, name := range slices.Sorted(maps.Keys(changes)) {
		raw := changes[name]
		k, ok := Lookup(name)
		switch {
		case !ok || !k.AppliesTo(s.model):
			ce.Unknown = append(ce.Unknown, name)
		case !k.Live:
			ce.Restart = append(ce.Restart, name)
		case strings.TrimSpace(raw) == "":
			next.vals[name] = s.start[name]
		default:
			v, err := k.Parse(raw)
			if err != nil {
				ce.Invalid = append(ce.Invalid, k.fail(raw, err.Error()))
				continue
			}
			next.vals[name] = entry{v, FromRuntime}
		}
	}
	changed := map[string]bool{}
	for _, k := range All {
		e, ok := next.vals[k.Name]
		if !ok {
			continue
		}
		if k.DefaultFrom != "" && e.src == FromDefault {
			next.vals[k.Name] = entry{next.defaultOf(k), FromDefault}
		}
		if next.vals[k.Name].v.Text != s.vals[k.Name].v.Text {
			changed[k.Name] = true
		}
	}
	for _, err := range next.check(changed) {
		ce.Invalid = append(ce.Invalid, err.(*Error))
	}
	if len(ce.Unknown)+len(ce.Restart)+len(ce.Invalid) > 0 {
		return nil, nil, &ce
	}
	return next, slices.Sorted(maps.Keys(changed)), nil
}

// Model is the model the set is for.
func (s *Set) Model() string { return s.model }

// Get returns name's value and where it came from; ok is false for a knob
// that does not apply to the set's model.
func (s *Set) Get(name string) (v Value, src Source, ok bool) {
	e, ok := s.vals[name]
	return e.v, e.src, ok
}

// Text is name's value in the environment's syntax ("" when it does not apply).
func (s *Set) Text(name string) string { return s.vals[name].v.Text }

// Int is name's integer value (Int, IntOr, Bool as 0 or 1).
func (s *Set) Int(name string) int { return s.vals[name].v.Int }

// Duration is name's duration value.
func (s *Set) Duration(name string) time.Duration { return s.vals[name].v.Dur }

// Bool is name's boolean value.
func (s *Set) Bool(name string) bool { return s.vals[name].v.Int == 1 }

// Word says whether an IntOr knob is set to its word (LIMIT=adaptive).
func (s *Set) Word(name string) bool { return s.vals[name].v.Word }

// Knobs returns the declarations that apply to the set's model, in the
// order of All.
func (s *Set) Knobs() []Knob {
	var ks []Knob
	for _, k := range All {
		if s.has(k.Name) {
			ks = append(ks, k)
		}
	}
	return ks
}

// LogAttrs returns every knob as shown (Knob.Show), for the start-up log.
func (s *Set) LogAttrs() []any {
	var out []any
	for _, k := range s.Knobs() {
		out = append(out, k.Name, k.Show(s.vals[k.Name].v))
	}
	return out
}
