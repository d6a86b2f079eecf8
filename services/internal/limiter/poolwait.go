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

// maxProbeEvery is the most windows the limit waits, after a climb that
// made acquires wait, before it climbs again (probeEvery): each probe one
// above the pool makes every acquire of its window wait (about a hold over
// the pool size each), so a limit that has found the pool probes it every
// 3 s rather than every other window, and a pool that grew is still found
// within 3 s plus one window per connection.
const maxProbeEvery = 30

// poolWaitShare is the share of a window's acquires that may wait before
// the limit backs off: the odd acquire made outside the limit (a readiness
// ping) must not push it down.
const poolWaitShare = 0.02

// lullWindow is the longest window judged. A window ends at the first
// permit released or refused after it is due, so one that ran ten times
// its length spans a lull (a pause in the load, a change made in it), and
// its waits belong to what came after it, not to its whole length. It is
// long enough that a load of a few requests a second, whose windows run
// a few hundred milliseconds, is still judged; below about one a second
// the limit learns nothing.
const lullWindow = 10 * poolWindow

// noCut is cutAt when no latency cut awaits its verdict: before every hold.
const noCut = -1 << 63

// latencyRise is how far a window's mean hold may rise above the baseline
// before the limit backs off on latency; latencyFall is how much shorter
// the holds begun after such a cut must be than those begun before it for
// the cut to count as having helped; holdSamples is the fewest holds a
// latency figure is taken from.
const (
	latencyRise = 1.5
	latencyFall = 0.97
	holdSamples = 10
)

// poolLimit is LIMIT=adaptive when the limiter can read the pool it
// protects (Config.PoolWaits): an AIMD controller on two signals, the
// pool's own first and request latency second.
//
// The pool. The semaphore guards one known resource, so the question a
// limit must answer is "does the pool have a connection free for every
// permit?", and the pool answers it directly: with at most as many permits
// as connections no acquire waits, with one more they start to. A slower
// query (100 ms instead of 20) changes no acquire's wait while the permits
// fit the pool, which is why this limit does not lose the pool after a
// slow phase, as a latency gradient whose baseline drifts does. The pool
// size is never configured: it is found, and followed when it shrinks
// (waits appear) or grows (none do).
//
// Latency. A pool with a connection for every permit can still be too many
// for what is behind it: a database whose cores are busy, or a process
// whose admitted requests wait for a CPU, answers each permit more slowly
// without any acquire waiting. The limit sees that as the time a permit is
// held (admission to release, requests answered in time only) rising above its
// baseline, the lowest window mean seen. A rise alone is ambiguous: fewer
// permits shorten a hold that queues for something, not a query that got
// slower. So a latency cut is an experiment: the holds begun after it are
// compared with those begun before it that ended after it, the same
// moments at the old limit (the window that caused the cut may have caught
// the rise half-way). Shorter by latencyFall, the rise was congestion and
// the limit may go on down; not shorter, the slower hold is the new normal
// and becomes the baseline. A slower query thus costs one cut of a tenth,
// won back in a few windows.
//
// Each window, in order:
//
//   - a window that ran past lullWindow spans a lull (windows end on
//     requests) and is not judged: its waits came after the lull, and
//     over its whole length would read as a fraction of what they are.
//     A lull also ends a latency cut's experiment and a settling window;
//     the next window, of traffic, is judged;
//   - the window right after a cut on pool waits is not judged on its
//     waits: the requests that were waiting in the pool at the cut end
//     their waits in it;
//   - more than poolWaitShare of the acquires waited: the limit is above
//     the pool; cut it by what the waits say it is above (excess);
//   - a latency cut awaits its verdict: hold until holdSamples holds begun
//     after it have completed, then judge it (above);
//   - the mean hold is over latencyRise times the baseline, in a window
//     where no acquire waited and that follows no probe (the waits a probe
//     causes are counted a window late, and a hold includes its wait: the
//     pool signal's to judge): cut by a tenth, and wait for the verdict;
//   - none of these, and the limit turned a request away or made it
//     queue: the limit may be below what the pool can take; add one: at
//     once below the limit at which acquires last waited (the ceiling),
//     and to the ceiling or above only after probeEvery quiet windows, a
//     wait that doubles (to maxProbeEvery) each time such a probe finds
//     the ceiling again, and is none once a probe made no acquire wait
//     (the pool grew). Waits that no climb caused (the pool shrank) keep
//     that pace: the cut is what they measured, and the ceiling is still
//     the limit before it, so the limit climbs back at once to one above
//     the shrunk pool (a cut too deep, or the first probe); the waits
//     there set the ceiling, and each probe after it, a window of waits,
//     comes at the pace the probes had;
//   - otherwise hold it: a limit that binds nothing learns nothing.
//
// With a fast database it settles at the pool's free connections, probing
// one above them every few seconds; with a congested one, where the mean
// hold is latencyRise times the uncongested one.
type poolLimit struct {
	g      *gate.Gate
	lo, hi int
	waits  func() PoolWaits
	now    func() time.Time

	// binding: since the window began, a request found every permit held.
	binding atomic.Bool
	// due is when the window ends, in now's UnixNano.
	due atomic.Int64
	// held sums the window's completed holds; of those since cutAt
	// (UnixNano), the latency cut awaiting its verdict, after the ones
	// begun after it and before the others.
	held, before, after holds
	cutAt               atomic.Int64

	mu      sync.Mutex // one adjustment at a time; guards the rest
	last    PoolWaits
	lastAt  time.Time // when the last window was adjusted
	cur     int
	base    time.Duration // baseline hold; 0 until measured
	judging time.Duration // > 0: the mean hold that made a latency cut
	// climbed: the last window added a permit. settling: the last window
	// cut on pool waits, and the requests still waiting in the pool then
	// finish their waits in this one. ceiling is the limit at which acquires
	// last waited (0: none known); a climb to it or above waits for
	// probeEvery quiet windows (quiet counts the windows judged since that
	// cut).
	climbed, settling bool
	ceiling           int
	quiet, probeEvery int
	signal            poolSignal
}

// holds sums completed holds.
type holds struct{ n, ns atomic.Int64 }

func (h *holds) add(d time.Duration) { h.ns.Add(int64(d)); h.n.Add(1) }

// take returns the mean hold and the count, and starts again from zero.
func (h *holds) take() (time.Duration, int64) {
	n, ns := h.n.Swap(0), h.ns.Swap(0)
	if n == 0 {
		return 0, 0
	}
	return time.Duration(ns / n), n
}

// poolSignal is what the last window saw (orderlab_limiter_signal).
type poolSignal struct {
	waitShare float64       // of its acquires, the share that waited
	hold      time.Duration // its mean hold (0: too few)
	base      time.Duration // the baseline hold
}

func newPoolLimit(cfg Config) (*poolLimit, error) {
	lo, hi := max(cfg.Min, 1), cfg.Max
	if hi < lo {
		return nil, fmt.Errorf("limiter: adaptive limit bounds %d..%d: want min <= max", lo, hi)
	}
	start := min(max(20, lo), hi)
	p := &poolLimit{g: gate.New(start), lo: lo, hi: hi, waits: cfg.PoolWaits, now: time.Now, cur: start}
	p.g.SetOrder(cfg.NewestFirst)
	p.last, p.lastAt = p.waits(), p.now()
	p.due.Store(p.lastAt.Add(poolWindow).UnixNano())
	p.cutAt.Store(noCut)
	return p, nil
}

// granted returns the release of a permit taken now.
func (p *poolLimit) granted() func(bool) {
	start := p.now()
	return func(done bool) {
		p.g.Release()
		if done {
			end := p.now()
			d := end.Sub(start)
			p.held.add(d)
			switch cut := p.cutAt.Load(); {
			case start.UnixNano() >= cut:
				p.after.add(d)
			case end.UnixNano() >= cut:
				p.before.add(d)
			}
		}
		p.tick()
	}
}

func (p *poolLimit) tryAcquire() (func(bool), bool) {
	if !p.g.TryAcquire() {
		p.binding.Store(true)
		p.tick()
		return nil, false
	}
	return p.granted(), true
}

func (p *poolLimit) acquire(ctx context.Context) (func(bool), error) {
	p.binding.Store(true) // it is only called once tryAcquire failed
	if err := p.g.Acquire(ctx); err != nil {
		return nil, err
	}
	return p.granted(), nil
}

func (p *poolLimit) limit() int { return p.g.Size() }

// excess is how many permits the limit has above the pool, from a window
// of length d in which the pool's acquires waited waitTime in all. By
// Little's law that is the mean number of requests waiting in the pool
// over the window: the permits there are no connection for. A limit one
// above a pool of 20 is cut by one, back to the pool, where every
// connection stays busy (a cut of a tenth, 21 to 18, left two connections
// idle until the limit climbed back); a pool that shrank by half is found
// in a window or two. At least one, at most half the limit at once.
func (p *poolLimit) excess(waitTime, d time.Duration) int {
	e := int(float64(waitTime)/float64(d) + 0.5)
	return min(max(e, 1), max(p.cur/2, 1))
}

// Signals is what the pool-watching adaptive limit decided on in its last
// window: the share of the pool's acquires that waited, and the mean hold
// over the baseline hold (0 with too few holds). ok is false for the other
// limits.
func (l *Limiter) Signals() (waitShare, holdVsBaseline float64, ok bool) {
	p, ok := l.permits.(*poolLimit)
	if !ok {
		return 0, 0, false
	}
	s := p.signals()
	if s.hold > 0 && s.base > 0 {
		holdVsBaseline = float64(s.hold) / float64(s.base)
	}
	return s.waitShare, holdVsBaseline, true
}

// signals is what the last window saw.
func (p *poolLimit) signals() poolSignal {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.signal
}

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
	p.adjust(now)
}

// adjust is one window's decision (the type's comment); p.mu is held.
func (p *poolLimit) adjust(now time.Time) {
	w := p.waits()
	acquires, waited := w.Acquires-p.last.Acquires, w.Waited-p.last.Waited
	waitTime, window := w.WaitTime-p.last.WaitTime, now.Sub(p.lastAt)
	p.last, p.lastAt = w, now
	if window > lullWindow {
		// A lull (the type's comment): start afresh. The requests that were
		// in the pool at a cut, and the holds a latency cut was to be
		// judged on, ended in it or after it, on a pool that may have
		// changed.
		p.binding.Store(false)
		p.held.take()
		p.settling, p.judging = false, 0
		p.cutAt.Store(noCut)
		p.before.take()
		p.after.take()
		return
	}
	if window <= 0 {
		window = poolWindow
	}
	settling := p.settling
	p.settling = false
	binding := p.binding.Swap(false)
	hold, n := p.held.take()
	if n < holdSamples {
		hold = 0
	}
	cut := min(p.cur-1, p.cur*9/10)
	// probed: the last window climbed to the ceiling or above, where
	// acquires may wait.
	probed := p.climbed && p.cur >= p.ceiling
	next := p.cur
	switch {
	case settling:
		// The waits of the requests in the pool at the last cut end in this
		// window: they say nothing of the limit the cut set.
	case acquires > 0 && float64(waited) > poolWaitShare*float64(acquires):
		next, p.judging = p.cur-p.excess(waitTime, window), 0
		if p.climbed { // the climb found the ceiling again: probe it less often
			p.probeEvery = min(max(1, 2*p.probeEvery), maxProbeEvery)
		} // else the pool shrank: the probes keep their pace (above)
		p.ceiling, p.quiet, p.settling = p.cur, 0, true
	case p.judging > 0:
		if p.after.n.Load() < holdSamples {
			break
		}
		after, _ := p.after.take()
		before, n := p.before.take()
		if n < holdSamples {
			before = p.judging
		}
		if float64(after) > latencyFall*float64(before) {
			p.base = after // the cut did not help: the hold is the new normal
		}
		p.judging = 0
	case hold > 0 && p.base > 0 && float64(hold) > latencyRise*float64(p.base) && waited == 0 && !probed:
		// Not right after a probe, nor with any acquire waiting: a hold
		// includes its pool wait, and the waits a probe causes are counted
		// as they end, a window late. A latency cut there took the waits'
		// verdict from the pool signal: counted after the cut, they read as
		// a pool that changed (a ceiling at or below the pool, then cleared
		// by the next climb), and the limit climbed above the pool.
		next, p.judging = cut, hold
		p.cutAt.Store(now.UnixNano())
		p.after.take()
		p.before.take()
	case binding:
		if probed { // that climb made no acquire wait: room above
			p.probeEvery, p.ceiling = 0, 0
		}
		if p.cur+1 < p.ceiling || p.quiet >= p.probeEvery {
			next = p.cur + 1
		}
	}
	p.climbed = next > p.cur
	p.quiet++
	if hold > 0 && p.judging == 0 && (p.base == 0 || hold < p.base) {
		p.base = hold
	}
	p.signal = poolSignal{hold: hold, base: p.base}
	if acquires > 0 {
		p.signal.waitShare = float64(waited) / float64(acquires)
	}
	next = min(max(next, p.lo), p.hi)
	if next != p.cur {
		p.cur = next
		p.g.Resize(next)
	}
}
