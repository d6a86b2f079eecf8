package pipeline

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/orderlab/orderlab/services/internal/model"
	"github.com/orderlab/orderlab/services/internal/order"
)

// job is one request travelling through the stages: an order to place or
// connections to hold (op). Its ctx carries the request's span and deadline.
type job struct {
	ctx   context.Context
	op    model.Op
	input order.Input
	key   string
	req   order.Request // filled by the price stage
	delay time.Duration
	// downstream is a downstream call the order's transaction waits for
	// (api_call=inside); conns the connections a hold takes at once.
	downstream time.Duration
	conns      int
	done       chan result // buffered: a worker never blocks on a gone handler
	// audit says the job holds a reserved audit slot, which passes to the
	// audit stage with the created order or is given back.
	audit bool
	// state settles, once, who owns the outcome when the handler's deadline
	// races the commit: a worker claims the job before it writes it, a
	// handler abandons it before it gives up. A claimed job's handler waits
	// for the real outcome, so a committed order is never answered 503.
	state atomic.Int32
}

const (
	queued int32 = iota
	claimed
	abandoned
)

type result struct {
	res order.Result
	err error
}

// PlaceOrder enqueues the order with the ticket's slots and waits until it
// is committed (or failed). A nil error means the order is in the table.
// downstream is a downstream call to wait for inside the transaction: a
// batch waits once, for the longest of its orders' (their calls run at once).
func (t *ticket) PlaceOrder(ctx context.Context, in order.Input, key string, delay, downstream time.Duration) (order.Result, error) {
	p := t.p
	j := &job{ctx: ctx, op: model.PlaceOrder, input: in, key: key, delay: delay, downstream: downstream, done: make(chan result, 1)}
	if err := p.enqueue(t, j); err != nil {
		return order.Result{}, err
	}
	var r result
	select {
	case r = <-j.done:
	case <-ctx.Done():
		if j.state.CompareAndSwap(queued, abandoned) {
			return order.Result{}, ctx.Err() // no worker will write it
		}
		// A worker is writing it: wait for the outcome, which the batch's
		// CommitTimeout bounds.
		timer := time.NewTimer(p.cfg.CommitTimeout + 5*time.Second)
		defer timer.Stop()
		select {
		case r = <-j.done:
		case <-timer.C:
			return order.Result{}, fmt.Errorf("order outcome unknown after %s: %w", p.cfg.CommitTimeout, ctx.Err())
		}
	}
	if r.err == nil {
		r.err = r.res.Err
	}
	return r.res, r.err
}

// HoldConnection runs a pg_sleep of d with the ticket's intake slot, on one
// of the workers' connections, so that /work/db is bounded by the same
// workers as the orders. With conns above 1 the worker holds that many
// connections at once, taking each while holding the ones before.
func (t *ticket) HoldConnection(ctx context.Context, d time.Duration, conns int) error {
	j := &job{ctx: ctx, op: model.HoldConnection, delay: d, conns: conns, done: make(chan result, 1)}
	if err := t.p.enqueue(t, j); err != nil {
		return err
	}
	select {
	case r := <-j.done:
		return r.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// GetOrder reads the order straight from the store: reads are not staged.
func (t *ticket) GetOrder(ctx context.Context, id int64) (order.Order, error) {
	return t.p.store.GetOrder(ctx, id)
}
