package api

import (
	"context"
	"time"
)

// The query parameters of the pool pitfalls (docs/scenarios: nested-acquire, tx-across-downstream).
// LEAK_EVERY (scenario connection-leak) is the store's: it needs no query parameter.

// MaxConns caps conns of /work/db (1..MaxConns, default 1): the
// connections one request holds at once. With 2 or more, a request holds
// a connection while it takes the next one, the nested acquire of
// scenario nested-acquire: with as many such requests in flight as the pool has
// connections, each holds one and waits for another, a deadlock that
// lasts until their deadlines.
const MaxConns = 4

// Where POST /orders makes its downstream call (api_call), scenario tx-across-downstream.
const (
	// APICallBefore calls the downstream before the transaction: the
	// connection is held for the database's time only (the fix, the default).
	APICallBefore = "before"
	// APICallInside calls it inside the transaction, which holds its
	// connection for the call too.
	APICallInside = "inside"
)

// downstream reads api_delay (a duration, 0..MaxDelay, default 0: no
// downstream call) and api_call (before or inside, default before) of
// POST /orders.
func (q query) downstream() (delay time.Duration, inside bool, err error) {
	delay, err = q.duration("api_delay", 0)
	if err != nil {
		return 0, false, err
	}
	where, given := q["api_call"]
	if !given {
		where = APICallBefore
	}
	switch where {
	case APICallBefore:
		return delay, false, nil
	case APICallInside:
		return delay, true, nil
	default:
		return 0, false, invalid("api_call", "must be "+APICallBefore+" or "+APICallInside)
	}
}

// callDownstream waits d for a (simulated) call to a slow downstream
// service, or until ctx ends: the wait of /work/api and of POST /orders'
// api_delay.
func callDownstream(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
