package limiter

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/orderlab/orderlab/services/internal/gate"
)

// PoolWaits are a connection pool's cumulative acquire counters, as
// pgxpool's Stat keeps them: acquires, the ones that found the pool empty
// and waited, and the time those waited.
type PoolWaits struct {
	Acquires, Waited int64
	WaitTime         time.Duration
}

// poolWindow is how often the pool-watching limit looks at the pool: long
// enough for a hundred acquires at the lab's rates, short enough to climb
// from 1 to a pool of 20 in two seconds.
const poolWindow = 100 * time.Millisecond

// poolWaitShare is the share of a window's acquires that may wait before
// the limit backs off: the odd acquire made outside the limit (a readiness
// ping) must not push it down.
const poolWaitShare = 0.02

// poolLimit is LIMIT=adaptive when the limiter can read the pool it
// protects (Config.PoolWaits): an AIMD controller on the pool's own
// signal, whether acquires had to wait for a connection. The semaphore
// guards one known resource, so the question a limit must answer is "does
// the pool have a connection free for every permit?", and the pool answers
// it directly: with at most as many permits as connections no acquire
// waits, with one more they start to. So, each window:
//
//   - more than poolWaitShare of the acquires waited: the limit is above
//     the pool; cut it by a tenth (at least one);
//   - none waited (or few) and the limit turned a request away or made it
//     queue: the limit may be below the pool; add one;
//   - otherwise hold it: a limit that binds nothing learns nothing.
//
// It settles one or two above the pool's free connections, oscillating
// by a tenth, and follows the pool when it shrinks (waits appear) or grows
// (none do). Request latency does not enter: a slower query (100 ms instead
// of 20) changes no acquire's wait while the permits fit the pool, which is
// why it does not lose the pool after a slow phase, as a latency gradient
// whose baseline drifts does. The pool size is never configured: it is
// found.
type poolLimit struct {
	g      *gate.Gate
	lo, hi int
	waits  func() PoolWaits
	now    func() time.Time

	// binding: since the window began, a request found every permit held.
	binding atomic.Bool
	// due is when the window ends, in now's UnixNano.
	due atomic.Int64

	mu   sync.Mutex // one adjustment at a time; guards last and cur
	last PoolWaits
	cur  int
}

func newPoolLimit(cfg Config) (*poolLimit, error) {
	lo, hi := max(cfg.Min, 1), cfg.Max
	if hi < lo {
		return nil, fmt.Errorf("limiter: adaptive limit bounds %d..%d: want min <= max", lo, hi)
	}
	start := min(max(20, lo), hi)
	p := &poolLimit{g: gate.New(start), lo: lo, hi: hi, waits: cfg.PoolWaits, now: time.Now, cur: start}
	p.last = p.waits()
	p.due.Store(p.now().Add(poolWindow).UnixNano())
	return p, nil
}

func (p *poolLimit) release(bool) {
	p.g.Release()
	p.tick()
}

func (p *poolLimit) tryAcquire() (func(bool), bool) {
	if !p.g.TryAcquire() {
		p.binding.Store(true)
		p.tick()
		return nil, false
	}
	return p.release, true
}

func (p *poolLimit) acquire(ctx context.Context) (func(bool), error) {
	p.binding.Store(true) // it is only called once tryAcquire failed
	if err := p.g.Acquire(ctx); err != nil {
		return nil, err
	}
	return p.release, nil
}

func (p *poolLimit) limit() int { return p.g.Size() }

// tick adjusts the limit when the window is over; one caller does, the
// others go on at once.
func (p *poolLimit) tick() {
	if p.now().UnixNano() < p.due.Load() || !p.mu.TryLock() {
		return
	}
	defer p.mu.Unlock()
	now := p.now()
	if now.UnixNano() < p.due.Load() { // another caller adjusted first
		return
	}
	p.due.Store(now.Add(poolWindow).UnixNano())
	p.adjust()
}

// adjust is one window's decision (the type's comment); p.mu is held.
func (p *poolLimit) adjust() {
	w := p.waits()
	acquires, waited := w.Acquires-p.last.Acquires, w.Waited-p.last.Waited
	p.last = w
	binding := p.binding.Swap(false)
	next := p.cur
	switch {
	case acquires > 0 && float64(waited) > poolWaitShare*float64(acquires):
		next = min(p.cur-1, p.cur*9/10)
	case binding:
		next = p.cur + 1
	}
	next = min(max(next, p.lo), p.hi)
	if next != p.cur {
		p.cur = next
		p.g.Resize(next)
	}
}
