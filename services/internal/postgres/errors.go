package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/orderlab/orderlab/services/internal/fault"
	"github.com/orderlab/orderlab/services/internal/overload"
)

// phase is how far a transaction had gone when its error came.
type phase int

const (
	// connecting: no connection yet; nothing was sent.
	connecting phase = iota
	// running: the statements were sent and at least one of their results
	// is missing. The commit (at the batch's Sync) had not been reached.
	running
	// committing: every statement's result came back; the commit and its
	// answer were all that was left.
	committing
)

// classify is the one place that says what a pgx or pgconn error means:
// its fault.Class (README, Errors). at is the phase the error came in;
// broken says whether pgx closed the connection over it (it does for every
// network or protocol failure).
//
// How a broken connection is told apart from a broken commit:
//   - pgconn.SafeToRetry: nothing was written to the connection.
//   - pgx.ErrPreprocessingBatch: the batch failed while its statements were
//     being prepared, before any of them ran.
//   - A FATAL from the server (pg_terminate_backend, a fast shutdown)
//     arrives in order after every result the session produced: the
//     backend flushes its output with the error before it exits. Seen
//     before the batch's last result, it proves the session ended before
//     the commit, which comes at the batch's Sync after every statement.
//     57P02 (crash shutdown) is the exception: it comes from a backend
//     told to exit at once, at any point, so nothing can be concluded.
//   - Anything else that breaks a connection after sending (a reset, an
//     EOF, a timeout) proves nothing: the commit may have happened.
func classify(ctx context.Context, err error, at phase, broken bool) fault.Class {
	var pgErr *pgconn.PgError
	var prep pgx.ErrPreprocessingBatch
	switch {
	case at == connecting:
		return fault.Unavailable
	case ctx.Err() != nil:
		return fault.Deadline
	case pgconn.SafeToRetry(err), errors.As(err, &prep) && !errors.As(err, &pgErr):
		return fault.ConnectionLost
	case errors.As(err, &pgErr):
		return classifyServerError(pgErr, at, errors.As(err, &prep))
	case !broken:
		return fault.Other // the connection is fine: a bug on this side (a scan into the wrong type)
	}
	return fault.OutcomeUnknown
}

// classifyServerError classifies an error the server sent. prepared is true
// when it came while the batch was being prepared, before anything ran.
func classifyServerError(e *pgconn.PgError, at phase, prepared bool) fault.Class {
	if !sessionEnded(e) {
		if strings.HasPrefix(e.Code, "23") { // integrity_constraint_violation
			return fault.Conflict
		}
		return fault.Other // the server refused the transaction: nothing committed
	}
	switch {
	case e.Code == "57P03", e.Code == "53300": // cannot_connect_now, too_many_connections
		return fault.Unavailable
	case e.Code == "57P02": // crash_shutdown: the backend exits at once, wherever it is
		if prepared {
			return fault.ConnectionLost
		}
		return fault.OutcomeUnknown
	case prepared || at == running:
		return fault.ConnectionLost
	}
	return fault.OutcomeUnknown
}

// sessionEnded says whether the server ended the session with e: a FATAL or
// PANIC, or a connection_exception (class 08).
func sessionEnded(e *pgconn.PgError) bool {
	return e.Severity == "FATAL" || e.Severity == "PANIC" || strings.HasPrefix(e.Code, "08")
}

// faultErr wraps err with its class, and records it: the class's error
// count, and for a broken connection the time, so that the pool pings the
// connections idle since before it (Store.shouldPing), and a sweep of the
// idle connections (Store.sweep).
func (s *Store) faultErr(ctx context.Context, err error, at phase, broken bool) error {
	if err == nil {
		return nil
	}
	var starved *overload.PoolTimeoutError
	if errors.As(err, &starved) {
		return err // the pool's own class (pool-exhausted)
	}
	c := classify(ctx, err, at, broken)
	s.m.errors.WithLabelValues(c.String()).Inc()
	switch c {
	case fault.Unavailable, fault.ConnectionLost, fault.OutcomeUnknown:
		s.brokenAt.Store(nowNano())
		s.sweep()
	case fault.Deadline:
		if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
			err = fmt.Errorf("%w: %w", cerr, err) // the request ran out of time
		}
	}
	return &fault.Error{Class: c, Err: err}
}

func nowNano() int64 { return time.Now().UnixNano() }

// Refused says whether the server refused a transaction that failed with
// err because of what it was asked to do (a constraint, a deadlock): the
// session lives on, nothing was committed, and sending the statements
// separately would find the one to blame.
func Refused(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && !sessionEnded(pgErr)
}
