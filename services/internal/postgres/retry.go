package postgres

import (
	"context"

	"github.com/orderlab/orderlab/services/internal/dberr"
	"github.com/orderlab/orderlab/services/internal/order"
)

// A call that fails because its connection broke is sent once more, within
// the caller's deadline, when that is safe (docs/reference/database-failures.md):
//
//   - dberr.ConnectionLost (nothing was committed): everything is sent again.
//   - dberr.OutcomeUnknown (the transaction may have committed): keyed
//     orders are sent again and take the replay path, which returns the
//     stored order if the first attempt committed it; an order without a
//     key is not, since sending it again could store it twice. A read is
//     sent again: it commits nothing.
//
// Nothing else is retried: an unavailable database fails fast (the client
// is told when to come back), an exhausted pool or a deadline leaves no
// time, and the server's refusal would be repeated. The second attempt
// runs on a connection opened after the first one failed (acquire), so it
// does not land on another connection of the same fault.

// resend is what of a failed write is sent again.
type resend int

const (
	resendNothing resend = iota
	// resendAll: nothing was committed (dberr.ConnectionLost).
	resendAll
	// resendKeyed: the keyed orders, whose resend is a replay
	// (dberr.OutcomeUnknown); the others keep the first error.
	resendKeyed
)

// retryWrite says what of the orders ns, whose write failed with err, is
// sent again, and counts the retry.
func (s *Store) retryWrite(ctx context.Context, err error, ns []order.Request) resend {
	c, ok := dberr.ClassOf(err)
	if !ok || ctx.Err() != nil {
		return resendNothing
	}
	switch c {
	case dberr.ConnectionLost:
		s.retried(c)
		return resendAll
	case dberr.OutcomeUnknown:
		for _, n := range ns {
			if n.IdempotencyKey != "" {
				s.retried(c)
				return resendKeyed
			}
		}
	}
	return resendNothing
}

// retryRead says whether a read that failed with err is sent again, and
// counts the retry.
func (s *Store) retryRead(ctx context.Context, err error) bool {
	c, ok := dberr.ClassOf(err)
	if !ok || ctx.Err() != nil || (c != dberr.ConnectionLost && c != dberr.OutcomeUnknown) {
		return false
	}
	s.retried(c)
	return true
}

// readErr reports a read's broken connection as dberr.ConnectionLost: a
// read commits nothing, so its outcome is never in doubt.
func readErr(err error) error {
	if c, _ := dberr.ClassOf(err); c == dberr.OutcomeUnknown {
		return &dberr.Error{Class: dberr.ConnectionLost, Err: err}
	}
	return err
}

func (s *Store) retried(reason dberr.Class) {
	s.m.retries.WithLabelValues(reason.String()).Inc()
}
