// Package knob declares every setting of the services once (declarations.go):
// its name, type and unit, range, default, the models it applies to, whether
// it changes live or needs a restart (and why), and what it means. The
// environment (FromEnv), the admin API's PATCH /knobs (Set.With), the knobs
// table in docs/reference/knobs.md and compose.yaml's pass-through all read or
// are tested against these declarations. Values are parsed in one syntax, the
// environment's, wherever they come from.
package knob

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/orderlab/orderlab/internal/pgdb"
)

// Kind is a knob's type.
type Kind int

const (
	Int      Kind = iota // an integer in [Min, Max]
	Duration             // a Go duration (100ms, 2s) in [Min, Max] nanoseconds
	Enum                 // one of Values
	Bool                 // true or false
	IntOr                // an integer in [Min, Max], or the word Values[0]
	String               // free text (an address, a name)
	DSN                  // a Postgres connection string: shown as pgdb.Describe shows it
	Secret               // never shown
)

// Knob is one setting's declaration.
type Knob struct {
	Name string
	Kind Kind
	Unit string // for the table: "connections", "bytes"; durations need none
	// Min and Max bound Int, IntOr (as integers) and Duration (as
	// nanoseconds) values.
	Min, Max int64
	Values   []string // Enum: the accepted values; IntOr: the word
	// Default is the value when the environment leaves the knob unset, in
	// the environment's syntax. DefaultFrom, when set, names the knob whose
	// value is the default instead (LIMIT: DB_MAX_CONNS).
	Default     string
	DefaultFrom string
	// DefaultText, when set, describes a default that Default cannot
	// spell (HTTP_HANDLER_POOL: nbio's own).
	DefaultText string
	Models      []string // the models it applies to; nil: all three
	Live        bool
	// Restart says, for a knob that is not live, why a change needs a restart.
	Restart string
	Meaning string
}

// Value is a knob's parsed value.
type Value struct {
	Text string        // canonical, in the environment's syntax
	Int  int           // Int, IntOr (unless Word), Bool (0 or 1)
	Dur  time.Duration // Duration
	Word bool          // IntOr: the word was given
}

// AppliesTo says whether the knob applies to model.
func (k Knob) AppliesTo(model string) bool {
	if k.Models == nil {
		return true
	}
	for _, m := range k.Models {
		if m == model {
			return true
		}
	}
	return false
}

// Accepts describes the values the knob accepts, for error messages and
// the table: "an integer from 1 to 10000".
func (k Knob) Accepts() string {
	switch k.Kind {
	case Int:
		return fmt.Sprintf("an integer from %d to %d", k.Min, k.Max)
	case IntOr:
		return fmt.Sprintf("an integer from %d to %d, or %s", k.Min, k.Max, k.Values[0])
	case Duration:
		return fmt.Sprintf("a duration from %s to %s, such as 100ms", time.Duration(k.Min), time.Duration(k.Max))
	case Enum:
		return "one of " + strings.Join(k.Values, ", ")
	case Bool:
		return "true or false"
	case DSN:
		return "a Postgres URL or keyword/value string"
	}
	return "a string"
}

// Range is Accepts without the prose, for GET /knobs: "1..10000".
func (k Knob) Range() string {
	switch k.Kind {
	case Int:
		return fmt.Sprintf("%d..%d", k.Min, k.Max)
	case IntOr:
		return fmt.Sprintf("%d..%d or %s", k.Min, k.Max, k.Values[0])
	case Duration:
		return fmt.Sprintf("%s..%s", time.Duration(k.Min), time.Duration(k.Max))
	case Enum:
		return strings.Join(k.Values, ", ")
	case Bool:
		return "true, false"
	}
	return ""
}

// Parse reads s in the environment's syntax (surrounding space ignored).
// Its error says what the knob accepts; the caller names the knob.
func (k Knob) Parse(s string) (Value, error) {
	t := strings.TrimSpace(s)
	bad := fmt.Errorf("want %s", k.Accepts())
	switch k.Kind {
	case Int, IntOr:
		if k.Kind == IntOr && t == k.Values[0] {
			return Value{Text: t, Word: true}, nil
		}
		n, err := strconv.ParseInt(t, 10, 64)
		if err != nil || n < k.Min || n > k.Max {
			return Value{}, bad
		}
		return Value{Text: strconv.FormatInt(n, 10), Int: int(n)}, nil
	case Duration:
		d, err := time.ParseDuration(t)
		if err != nil || int64(d) < k.Min || int64(d) > k.Max {
			return Value{}, bad
		}
		return Value{Text: d.String(), Dur: d}, nil
	case Enum:
		for _, v := range k.Values {
			if t == v {
				return Value{Text: t}, nil
			}
		}
		return Value{}, bad
	case Bool:
		switch t {
		case "true":
			return Value{Text: t, Int: 1}, nil
		case "false":
			return Value{Text: t}, nil
		}
		return Value{}, bad
	}
	return Value{Text: s}, nil // String, DSN, Secret: as given
}

// Show is how v may be shown, in a log line or GET /knobs: a DSN as
// pgdb.Describe shows it (no password), a secret never.
func (k Knob) Show(v Value) string {
	switch k.Kind {
	case DSN:
		return pgdb.Describe(v.Text)
	case Secret:
		if v.Text == "" {
			return "unset"
		}
		return "set"
	}
	return v.Text
}

// Numeric says whether the knob has a number to export
// (orderlab_knob_value), and which: durations in seconds, booleans 0 or 1.
// An IntOr knob set to its word has none.
func (k Knob) Numeric(v Value) (float64, bool) {
	switch k.Kind {
	case Int, Bool:
		return float64(v.Int), true
	case IntOr:
		return float64(v.Int), !v.Word
	case Duration:
		return v.Dur.Seconds(), true
	}
	return 0, false
}

// Lookup returns the declaration of name.
func Lookup(name string) (Knob, bool) {
	for _, k := range All {
		if k.Name == name {
			return k, true
		}
	}
	return Knob{}, false
}
