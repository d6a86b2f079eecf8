// Package dberr names what a failed database call means for the request
// that made it: whether no connection could be had (the database did not
// answer, or the pool had none free before the deadline), whether the
// connection broke before or after the transaction was sent (and so
// whether anything may have been committed), whether time ran out, or
// whether the server refused what it was asked to do. The store
// (services/internal/postgres) gives each error its class in one place
// and decides from it whether sending the call again is safe; the pipeline
// decides from it whether a failed batch's orders are sent one by one; the
// HTTP layer answers each class with one status and problem type (docs/reference/api.md,
// Errors).
package dberr

import (
	"errors"
	"fmt"
	"time"
)

// Class is what a database error means for the request that met it.
type Class int

const (
	// Other is every error not named below: with a database that answers
	// and a request that fits the schema, a bug on this side (a scan into
	// the wrong type). It becomes a 500.
	Other Class = iota
	// Unavailable: no connection could be had (refused, no route, a
	// connect that timed out, a server starting up or shutting down, too
	// many clients). Nothing was sent. A 503 database-unavailable.
	Unavailable
	// PoolExhausted: the request's deadline passed while it waited for a
	// connection of the pool, which had none free: the pool is starved,
	// not the database. Nothing was sent. A 503 pool-exhausted.
	PoolExhausted
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
	// Refused: the server refused the transaction for another reason than
	// its data's integrity (a deadlock, a serialization failure, an error
	// in a statement); the session lives on and nothing was committed. A
	// 500, as for Other: the services' statements are not meant to meet it.
	Refused
)

// Counted lists the classes of orderlab_db_errors_total, each exported from
// the start: every class but PoolExhausted, which is the pool's (its
// acquire metrics count it) and reaches no database.
var Counted = []Class{Unavailable, ConnectionLost, OutcomeUnknown, Deadline, Conflict, Refused, Other}

// String is the class's label value in orderlab_db_errors_total and
// orderlab_db_retries_total.
func (c Class) String() string {
	switch c {
	case Unavailable:
		return "unavailable"
	case PoolExhausted:
		return "pool_exhausted"
	case ConnectionLost:
		return "connection_lost"
	case OutcomeUnknown:
		return "outcome_unknown"
	case Deadline:
		return "deadline"
	case Conflict:
		return "conflict"
	case Refused:
		return "refused"
	}
	return "other"
}

// Error is a database error with its class.
type Error struct {
	Class Class
	Err   error
	// Waited is how long the request waited for a connection, for
	// PoolExhausted.
	Waited time.Duration
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
