package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/orderlab/orderlab/services/internal/dberr"
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
// its dberr.Class (docs/reference/api.md, Errors). at is the phase the error came in;
// broken says whether pgx closed the connection over it (it does for every
// network or protocol failure). The pool's own failure, no connection free
// before the deadline, is acquire's to say (dberr.PoolExhausted).
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
func classify(ctx context.Context, err error, at phase, broken bool) dberr.Class {
	var pgErr *pgconn.PgError
	var prep pgx.ErrPreprocessingBatch
	switch {
	case at == connecting:
		return dberr.Unavailable
	case ctx.Err() != nil:
		return dberr.Deadline
	case pgconn.SafeToRetry(err), errors.As(err, &prep) && !errors.As(err, &pgErr):
		return dberr.ConnectionLost
	case errors.As(err, &pgErr):
		return classifyServerError(pgErr, at, errors.As(err, &prep))
	case !broken:
		return dberr.Other // the connection is fine: a bug on this side (a scan into the wrong type)
	}
	return dberr.OutcomeUnknown
}

// classifyServerError classifies an error the server sent. prepared is true
// when it came while the batch was being prepared, before anything ran.
func classifyServerError(e *pgconn.PgError, at phase, prepared bool) dberr.Class {
	if !sessionEnded(e) { // the server refused the transaction: nothing committed
		if strings.HasPrefix(e.Code, "23") { // integrity_constraint_violation
			return dberr.Conflict
		}
		return dberr.Refused
	}
	switch {
	case e.Code == "57P03", e.Code == "53300": // cannot_connect_now, too_many_connections
		return dberr.Unavailable
	case e.Code == "57P02": // crash_shutdown: the backend exits at once, wherever it is
		if prepared {
			return dberr.ConnectionLost
		}
		return dberr.OutcomeUnknown
	case prepared || at == running:
		return dberr.ConnectionLost
	}
	return dberr.OutcomeUnknown
}

// tooManyClients says whether err is the server refusing a connection for
// want of room: SQLSTATE 53300, too_many_connections, sent for
// max_connections and for a role's CONNECTION LIMIT alike.
func tooManyClients(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "53300"
}

// sessionEnded says whether the server ended the session with e: a FATAL or
// PANIC, or a connection_exception (class 08).
func sessionEnded(e *pgconn.PgError) bool {
	return e.Severity == "FATAL" || e.Severity == "PANIC" || strings.HasPrefix(e.Code, "08")
}

// classified wraps err, a pgx or pgconn error, with its class, and records
// it: the class's error count, and for a broken connection the time, so
// that the pool pings the connections idle since before it
// (Store.shouldPing), and a sweep of the idle connections (Store.sweep).
func (s *Store) classified(ctx context.Context, err error, at phase, broken bool) error {
	if err == nil {
		return nil
	}
	c := classify(ctx, err, at, broken)
	s.m.errors.WithLabelValues(c.String()).Inc()
	if c == dberr.Unavailable && tooManyClients(err) {
		s.m.tooManyClients.Inc()
	}
	switch c {
	case dberr.Unavailable, dberr.ConnectionLost, dberr.OutcomeUnknown:
		s.brokenAt.Store(nowNano())
		s.sweep()
	case dberr.Deadline:
		if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
			err = fmt.Errorf("%w: %w", cerr, err) // the request ran out of time
		}
	}
	return &dberr.Error{Class: c, Err: err}
}

func nowNano() int64 { return time.Now().UnixNano() }
