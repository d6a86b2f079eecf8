package postgres

import (
	"context"
	"time"

	"github.com/orderlab/orderlab/services/internal/fault"
	"github.com/orderlab/orderlab/services/internal/order"
)

// A call that fails because its connection broke is sent once more, within
// the caller's deadline, when that is safe (README, When the database
// fails):
//
//   - fault.ConnectionLost (nothing was committed): everything is sent again.
//   - fault.OutcomeUnknown (the transaction may have committed): keyed
//     orders are sent again and take the replay path, which returns the
//     stored order if the first attempt committed it; an order without a
//     key is not, since sending it again could store it twice. A read is
//     sent again: it commits nothing.
//
// Nothing else is retried: an unavailable database fails fast (the client
// is told when to come back), a deadline leaves no time, and the server's
// refusal of the data would be repeated. The second attempt runs on a
// connection opened after the first one failed (acquire), so it does not
// land on another connection of the same fault.

// CreateOrders inserts orders in one transaction and one round trip,
// sleeping delay first when it is positive, and retries as said above.
//
// The error is the transaction's, a *fault.Error (or an
// *overload.PoolTimeoutError): when it is not nil, no Result is returned
// and whether anything was committed is the class's to say. A per-order
// problem is reported in that order's Result.Err: an Idempotency-Key reused
// with another body, or, after a broken connection, an order without a key
// whose outcome is unknown (fault.OutcomeUnknown) while its keyed batch
// mates were replayed.
//
// downstream, when positive, is a downstream call the transaction waits for
// while it holds its connection (CreateOrder).
func (s *Store) CreateOrders(ctx context.Context, ns []order.Request, delay, downstream time.Duration) ([]Result, error) {
	rs, err := s.createOrders(ctx, ns, delay, downstream, time.Time{})
	failed := time.Now()
	class, isFault := fault.ClassOf(err)
	if err == nil || !isFault || ctx.Err() != nil {
		return rs, err
	}
	switch class {
	case fault.ConnectionLost:
		s.retried(class)
		return s.createOrders(ctx, ns, delay, downstream, failed)
	case fault.OutcomeUnknown:
		return s.replayKeyed(ctx, ns, delay, downstream, err, failed)
	}
	return nil, err
}

// replayKeyed sends the keyed orders of ns again after first, an error of
// unknown outcome. The orders without a key get first as their Result.Err.
// When the second attempt fails too, the outcome of every order is still
// unknown, whatever that attempt's own class.
func (s *Store) replayKeyed(ctx context.Context, ns []order.Request, delay, downstream time.Duration, first error, failed time.Time) ([]Result, error) {
	var keyed []order.Request
	var at []int
	for i, n := range ns {
		if n.IdempotencyKey != "" {
			keyed = append(keyed, n)
			at = append(at, i)
		}
	}
	if len(keyed) == 0 {
		return nil, first
	}
	s.retried(fault.OutcomeUnknown)
	again, err := s.createOrders(ctx, keyed, delay, downstream, failed)
	if err != nil {
		if c, _ := fault.ClassOf(err); c == fault.Deadline {
			return nil, err // also a write of unknown outcome, and the request's deadline
		}
		return nil, first
	}
	rs := make([]Result, len(ns))
	for i := range rs {
		rs[i].Err = first
	}
	for k, i := range at {
		rs[i] = again[k]
	}
	return rs, nil
}

// GetOrder returns the order with id, or order.ErrNotFound.
func (s *Store) GetOrder(ctx context.Context, id int64) (order.Order, error) {
	o, err := s.getOrder(ctx, id, time.Time{})
	if failed := time.Now(); s.retryRead(ctx, err) {
		o, err = s.getOrder(ctx, id, failed)
	}
	return o, readErr(err)
}

// HoldConnection takes a pooled connection and holds it for d with pg_sleep:
// a database call that takes d. With conns above 1 it holds that many
// connections at once, each taken while the ones before it are held, as a
// call that needs a second connection before it gives back its first
// (README, The pitfalls: 10).
func (s *Store) HoldConnection(ctx context.Context, d time.Duration, conns int) error {
	err := s.holdConnection(ctx, d, conns, time.Time{})
	if failed := time.Now(); s.retryRead(ctx, err) {
		err = s.holdConnection(ctx, d, conns, failed)
	}
	return readErr(err)
}

// retryRead says whether a read that failed with err is sent again, and
// counts the retry.
func (s *Store) retryRead(ctx context.Context, err error) bool {
	c, ok := fault.ClassOf(err)
	if !ok || ctx.Err() != nil || (c != fault.ConnectionLost && c != fault.OutcomeUnknown) {
		return false
	}
	s.retried(c)
	return true
}

// readErr reports a read's broken connection as fault.ConnectionLost: a
// read commits nothing, so its outcome is never in doubt.
func readErr(err error) error {
	if c, _ := fault.ClassOf(err); c == fault.OutcomeUnknown {
		return &fault.Error{Class: fault.ConnectionLost, Err: err}
	}
	return err
}

func (s *Store) retried(reason fault.Class) {
	s.m.retries.WithLabelValues(reason.String()).Inc()
}
