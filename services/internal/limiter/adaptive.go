package limiter

import (
	"context"
	"errors"
	"fmt"

	"github.com/failsafe-go/failsafe-go/adaptivelimiter"
)

// errQueueFull is an adaptive limit refusing to queue one more waiter.
var errQueueFull = errors.New("limiter queue full")

// adaptive is LIMIT=adaptive: failsafe-go's adaptive limiter, which
// compares the p90 of recent database-call latency (permit to release) with
// its longer-term baseline and lowers the limit when latency climbs with
// concurrency (requests queueing in the pool) and raises it while it does
// not. Nobody has to know the pool size: more permits than connections only
// add pool wait, which the limit sees and backs away from.
//
// With LIMIT_WAIT set, requests over the limit may queue: up to twice the
// current limit queue freely, beyond that a growing share is rejected at
// once, and beyond three times the limit all are. The queue is built
// whatever LIMIT_WAIT is: with a zero wait nobody queues (the Limiter only
// tries for a permit).
type adaptive struct {
	lim adaptivelimiter.AdaptiveLimiter[any]
}

// validBounds checks LIMIT_MIN and LIMIT_MAX, and returns the bounds the
// adaptive limit uses (a LIMIT_MIN below 1 is 1).
func validBounds(lo, hi int) (int, int, error) {
	lo = max(lo, 1)
	if hi < lo {
		return 0, 0, fmt.Errorf("limiter: adaptive limit bounds %d..%d: want LIMIT_MIN <= LIMIT_MAX", lo, hi)
	}
	return lo, hi, nil
}

func newAdaptive(cfg Config) (*adaptive, error) {
	lo, hi, err := validBounds(cfg.Min, cfg.Max)
	if err != nil {
		return nil, err
	}
	b := adaptivelimiter.NewBuilder[any]().
		WithLimits(uint(lo), uint(hi), uint(min(max(20, lo), hi))).
		WithQueueing(2, 3)
	return &adaptive{lim: b.Build()}, nil
}

func (a *adaptive) tryAcquire() (func(bool), bool) {
	p, ok := a.lim.TryAcquirePermit()
	if !ok {
		return nil, false
	}
	return done(p), true
}

func (a *adaptive) acquire(ctx context.Context) (func(bool), error) {
	if !a.lim.CanAcquirePermit() {
		return nil, errQueueFull
	}
	p, err := a.lim.AcquirePermit(ctx)
	if errors.Is(err, adaptivelimiter.ErrExceeded) {
		return nil, errQueueFull
	}
	if err != nil {
		return nil, err
	}
	return done(p), nil
}

// done records a completed call's latency, and drops one that did not
// complete, so that time-outs do not teach the limit.
func done(p adaptivelimiter.Permit) func(bool) {
	return func(completed bool) {
		if completed {
			p.Record()
		} else {
			p.Drop()
		}
	}
}

func (a *adaptive) limit() int { return a.lim.Limit() }
