// Package limiter owns the limit on concurrent database access in the
// semaphore service: a fixed number of permits, golang.org/x/sync's
// semaphore (fixed.go) or served newest first (newestfirst.go), or an
// adaptive limit that finds the pool's capacity, from the pool's own
// acquire waits when it can read them (poolwait.go) or else from latency
// (failsafe-go's adaptivelimiter, adaptive.go); with Retry-After, and what
// they tell their Metrics. A Limiter never changes: a
// live change of its knobs builds a new one (services/internal/live,
// model.go).
package limiter

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/orderlab/orderlab/services/internal/model"
	"github.com/orderlab/orderlab/services/internal/overload"
)

// Config says which limit to enforce.
type Config struct {
	// Adaptive selects the adaptive limit (LIMIT=adaptive); otherwise
	// Permits is the fixed limit (LIMIT=n).
	Adaptive bool
	Permits  int
	// Min and Max bound the adaptive limit (LIMIT_MIN, LIMIT_MAX); it
	// starts at min(max(20, Min), Max).
	Min, Max int
	// Wait is the longest a request waits for a permit before it is
	// rejected (LIMIT_WAIT); 0 rejects at once.
	Wait time.Duration
	// NewestFirst gives a freed permit to the request that began waiting
	// last (LIMIT_ORDER=lifo) instead of the one that has waited longest.
	// The adaptive limit that learns from latency (failsafe-go's) keeps its
	// own queue, in arrival order, whatever this says.
	NewestFirst bool
	// PoolWaits, when set, reads the pool the permits guard, and the
	// adaptive limit watches it (poolLimit) instead of request latency.
	PoolWaits func() PoolWaits
}

// Rejection reasons, the reason label of orderlab_limiter_rejections_total.
const (
	// ReasonAtLimit: every permit was held and waiting was off (LIMIT_WAIT=0).
	ReasonAtLimit = "at_limit"
	// ReasonQueueFull: the adaptive limit's wait queue was over its bound.
	ReasonQueueFull = "queue_full"
	// ReasonWaitTimeout: no permit came within LIMIT_WAIT.
	ReasonWaitTimeout = "wait_timeout"
)

// permits is where the permits come from: a semaphore or an adaptive
// limit. A returned release func gives the permit back; done says whether
// its request was answered within its deadline (an adaptive limit learns
// from those only).
type permits interface {
	// tryAcquire takes a permit if one is free now.
	tryAcquire() (release func(done bool), ok bool)
	// acquire waits for a permit until ctx ends. When the limit keeps a
	// bounded queue and it is full, it returns errQueueFull at once.
	acquire(ctx context.Context) (release func(done bool), err error)
	// limit is the current limit.
	limit() int
}

// Limiter hands out permits for database access. A caller waits at most
// Config.Wait for one; after that it is rejected, so that a saturated
// service answers 429 at once instead of queueing in front of the pool.
type Limiter struct {
	permits permits
	mode    string // the mode label of orderlab_limiter_limit: fixed or adaptive
	wait    time.Duration
	met     Metrics
	// released counts permits given back, for Retry-After.
	released *overload.ReleaseRate
	waiters  atomic.Int64
}

// Metrics are told what the Limiters of a service do
// (services/internal/limitermetrics exports them).
type Metrics interface {
	Limiting(l *Limiter) // l is the newest Limiter
	Waited(ctx context.Context, outcome string, d time.Duration)
	Rejected(reason string)
	InUse(delta int)   // permits held
	Waiting(delta int) // requests waiting for one
}

// New returns a Limiter for cfg that reports to met.
func New(cfg Config, met Metrics) (*Limiter, error) {
	p, mode, err := newPermits(cfg)
	if err != nil {
		return nil, err
	}
	l := &Limiter{permits: p, mode: mode, wait: max(cfg.Wait, 0), met: met, released: overload.NewReleaseRate()}
	met.Limiting(l)
	return l, nil
}

func newPermits(cfg Config) (permits, string, error) {
	switch {
	case cfg.Adaptive && cfg.PoolWaits != nil:
		p, err := newPoolLimit(cfg)
		return p, "adaptive", err
	case cfg.Adaptive:
		a, err := newAdaptive(cfg)
		return a, "adaptive", err
	case cfg.Permits < 1:
		return nil, "", fmt.Errorf("limiter: want at least one permit, got %d", cfg.Permits)
	case cfg.NewestFirst:
		return newNewestFirst(cfg.Permits), "fixed", nil
	}
	return newFixed(cfg.Permits), "fixed", nil
}

// Limit is the current limit.
func (l *Limiter) Limit() int { return l.permits.limit() }

// Mode is fixed or adaptive.
func (l *Limiter) Mode() string { return l.mode }

// Acquire takes a permit, waiting at most the Limiter's wait; its Release
// gives it back. When none comes in time the error is an
// *overload.RejectedError with a Retry-After derived from the queue in
// front of the permits and the rate they are given back; when ctx ends
// first it is ctx's error. Every wait is counted by outcome; the Permit's
// Wait says how it waited, for the request's trace.
func (l *Limiter) Acquire(ctx context.Context) (*Permit, error) {
	p := &Permit{l: l, start: time.Now(), limit: l.permits.limit(), waiters: l.waiters.Load()}
	release, ok := l.permits.tryAcquire()
	if !ok {
		var reason string
		release, reason = l.waitForPermit(ctx)
		if release == nil {
			waited := time.Since(p.start)
			if ctx.Err() != nil {
				l.met.Waited(ctx, "canceled", waited)
				return nil, ctx.Err()
			}
			l.met.Waited(ctx, "rejected", waited)
			l.met.Rejected(reason)
			return nil, &overload.RejectedError{Resource: "semaphore", Waited: waited,
				RetryAfter: l.released.RetryAfter(int(l.waiters.Load()))}
		}
	}
	p.waited, p.release = time.Since(p.start), release
	l.met.Waited(ctx, "acquired", p.waited)
	l.met.InUse(1)
	return p, nil
}

// waitForPermit waits at most LIMIT_WAIT for a permit. It returns nil and
// the rejection reason when none came; a zero wait rejects at once.
func (l *Limiter) waitForPermit(ctx context.Context) (func(done bool), string) {
	if l.wait <= 0 {
		return nil, ReasonAtLimit
	}
	l.waiters.Add(1)
	l.met.Waiting(1)
	defer func() { l.waiters.Add(-1); l.met.Waiting(-1) }()
	wctx, cancel := context.WithTimeout(ctx, l.wait)
	defer cancel()
	release, err := l.permits.acquire(wctx)
	switch {
	case err == nil:
		return release, ""
	case err == errQueueFull:
		return nil, ReasonQueueFull
	}
	return nil, ReasonWaitTimeout
}

// Permit is an acquired permit.
type Permit struct {
	l       *Limiter
	release func(done bool)
	once    atomic.Bool
	// The wait for it: when it began, how long it took, and the limit and
	// the waiters ahead when it began.
	start   time.Time
	waited  time.Duration
	limit   int
	waiters int64
}

// Wait is the permit's wait, the limiter.wait span of its request.
func (p *Permit) Wait() model.Wait {
	return model.Wait{Span: "limiter.wait", Start: p.start, Waited: p.waited, Attributes: []attribute.KeyValue{
		attribute.Int("limiter.limit", p.limit),
		attribute.Int64("limiter.waiters", p.waiters),
		attribute.String("limiter.outcome", "acquired"),
	}}
}

// Release gives the permit back, once. done says whether its request was
// answered within its deadline: an adaptive limit learns from those only,
// a timed-out request's latency teaching it nothing about the database.
func (p *Permit) Release(done bool) {
	if !p.once.CompareAndSwap(false, true) {
		return
	}
	p.l.met.InUse(-1)
	p.l.released.Released()
	p.release(done)
}
