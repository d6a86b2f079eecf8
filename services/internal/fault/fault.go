// Package fault names what a failed database call means for the request
// that made it: whether the database could not be reached, whether the
// connection broke before or after the transaction was sent (and so whether
// anything may have been committed), whether time ran out, or whether the
// data conflicted with what is stored. The store (services/internal/postgres)
// decides the class of each error in one place; the HTTP layer answers each
// class with one status and problem type (README, Errors); the models and
// the pipeline decide from it whether a retry is safe.
package fault

import (
	"errors"
	"fmt"
)

// Class is what a database error means for the request that met it.
type Class int

const (
	// Other is every error not named below: with a database that answers
	// and a request that fits the schema, a bug. It becomes a 500.
	Other Class = iota
	// Unavailable: no connection could be had (refused, no route, a
	// connect that timed out, a server starting up or shutting down, too
	// many clients). Nothing was sent. A 503 database-unavailable.
	Unavailable
	// ConnectionLost: the connection broke and nothing was committed,
	// certainly: nothing had been sent, or the server ended the session
	// before it reached the commit. Safe to send again.
	ConnectionLost
	// OutcomeUnknown: the connection broke after the transaction was sent
	// and before its outcome came back: it may have committed. Only a
	// keyed order may be sent again (the key makes the resend a replay).
	OutcomeUnknown
	// Deadline: the request's deadline passed while the database worked
	// on it. For a write, the outcome is unknown too.
	Deadline
	// Conflict: the server refused the data (an integrity constraint).
	// Nothing was committed.
	Conflict
)

// Classes lists every class, for metrics that export each one from the start.
var Classes = []Class{Unavailable, ConnectionLost, OutcomeUnknown, Deadline, Conflict, Other}

// String is the class's label value in orderlab_db_errors_total.
func (c Class) String() string {
	switch c {
	case Unavailable:
		return "unavailable"
	case ConnectionLost:
		return "connection_lost"
	case OutcomeUnknown:
		return "outcome_unknown"
	case Deadline:
		return "deadline"
	case Conflict:
		return "conflict"
	}
	return "other"
}

// Error is a database error with its class.
type Error struct {
	Class Class
	Err   error
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %v", e.Class, e.Err) }
func (e *Error) Unwrap() error { return e.Err }

// ClassOf returns the class of the first *Error in err's chain, and false
// when there is none (the error did not come from the database).
func ClassOf(err error) (Class, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e.Class, true
	}
	return Other, false
}
