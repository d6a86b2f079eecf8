package limiter

import (
	"fmt"
	"strconv"
	"testing"
	"time"
)

// sim drives a poolLimit on a clock of its own, one millisecond at a time,
// under a closed loop that always wants more permits than the limit gives
// (every permit given back is taken again at once). Each request holds its
// permit for the query's time, longer when it has to share: with n permits
// held, n above the pool's size queue for a connection (and their acquires
// count as waited, each for the n-pool ahead of it to get a connection, at
// one per query/pool), n above the database's capacity queue for the
// database (a busy CPU, say: no acquire waits). Either way the hold grows
// as n over the smaller of the two.
type sim struct {
	t        *testing.T
	p        *poolLimit
	now      time.Time
	pool     int
	capacity int
	query    time.Duration
	waits    PoolWaits
	waiting  []simWait
	held     []simHold
}

// simWait is an acquire waiting for a connection, counted when it ends.
type simWait struct{ start, end time.Time }

type simHold struct {
	end     time.Time
	release func(bool)
}

func newSim(t *testing.T, pool int) *sim {
	s := &sim{t: t, pool: pool, capacity: 1000, query: 20 * time.Millisecond, now: time.Unix(0, 0)}
	p, err := newPoolLimit(Config{Adaptive: true, Min: 1, Max: 200, PoolWaits: func() PoolWaits { return s.waits }})
	if err != nil {
		t.Fatal(err)
	}
	p.now, p.lastAt = func() time.Time { return s.now }, s.now
	p.due.Store(s.now.Add(poolWindow).UnixNano())
	s.p = p
	return s
}

// ms moves the clock one millisecond: the holds that are over are given
// back, then permits are taken until the limit refuses one.
func (s *sim) ms() {
	s.now = s.now.Add(time.Millisecond)
	kept := s.held[:0]
	for _, h := range s.held {
		if h.end.After(s.now) {
			kept = append(kept, h)
			continue
		}
		h.release(true)
	}
	s.held = kept
	// As pgxpool does, a waited acquire is counted when its wait ends.
	pending := s.waiting[:0]
	for _, w := range s.waiting {
		if w.end.After(s.now) {
			pending = append(pending, w)
			continue
		}
		s.waits.Waited++
		s.waits.WaitTime += w.end.Sub(w.start)
	}
	s.waiting = pending
	for {
		r, ok := s.p.tryAcquire()
		if !ok {
			return
		}
		n := len(s.held) + 1
		s.waits.Acquires++
		if n > s.pool { // it waits for the n-pool ahead of it to get a connection
			s.waiting = append(s.waiting, simWait{start: s.now, end: s.now.Add(time.Duration(n-s.pool) * s.query / time.Duration(s.pool))})
		}
		share := float64(n) / float64(min(s.pool, s.capacity))
		s.held = append(s.held, simHold{end: s.now.Add(time.Duration(float64(s.query) * max(1, share))), release: r})
	}
}

// run simulates d and fails unless, from 10 s into it, the limit stays
// within lo..hi. It returns the lowest limit of the whole run.
func (s *sim) run(what string, d time.Duration, lo, hi int) (lowest int) {
	s.t.Helper()
	var trace []int
	lowest = s.p.limit()
	for i := range int(d / time.Millisecond) {
		s.ms()
		l := s.p.limit()
		lowest = min(lowest, l)
		if (i+1)%100 != 0 {
			continue
		}
		trace = append(trace, l)
		if time.Duration(i+1)*time.Millisecond >= 10*time.Second && (l < lo || l > hi) {
			s.t.Fatalf("%s: limit %d after %s, want %d..%d; limits by window: %v",
				what, l, time.Duration(i+1)*time.Millisecond, lo, hi, trace)
		}
	}
	return lowest
}

// around is want ± 20%.
func around(want int) (int, int) { return want * 8 / 10, want * 12 / 10 }

// The limit follows the pool's size, told nothing of it: from its start of
// 20 on a pool of 20, to a pool shrunk to 10, grown to 60, and back to 20;
// each within 10 s, and there it stays, between the pool and one above it
// (a cut by the excess the waits measure, not by a tenth).
func TestPoolLimitFollowsThePool(t *testing.T) {
	s := newSim(t, 20)
	for _, pool := range []int{20, 10, 60, 20} {
		s.pool = pool
		s.run("pool "+strconv.Itoa(pool), 20*time.Second, pool, pool+1)
	}
}

// With a connection for every permit but a database that serves only 8 at
// full speed, no acquire waits and the holds grow: latency is the signal.
// The limit comes down to where the mean hold is at most latencyRise times
// the uncongested one (8 x 1.5 = 12), not below the capacity by more than
// a fifth, and goes back to the pool when the database recovers.
func TestPoolLimitBacksOffWhenHoldsGrowWithoutPoolWaits(t *testing.T) {
	s := newSim(t, 20)
	lo, hi := around(20)
	s.run("pool 20, database fast", 20*time.Second, lo, hi)
	s.capacity = 8
	was := s.waits
	s.run("pool 20, database serving 8", 20*time.Second, 8*8/10, int(latencyRise*8)+1)
	if acq, waited := s.waits.Acquires-was.Acquires, s.waits.Waited-was.Waited; waited*50 > acq {
		t.Fatalf("%d of %d acquires waited: the pool was the signal, not latency", waited, acq)
	}
	s.capacity = 1000
	s.run("pool 20, database fast again", 20*time.Second, lo, hi)
}

// A query that gets slower (20 ms to 100 ms and back) is no congestion: the
// holds grow whatever the limit, so the one latency cut it causes does not
// shorten them, the slower hold becomes the baseline, and the limit stays
// with the pool, never more than two cuts of a tenth below it.
func TestPoolLimitKeepsThePoolWhenTheQuerySlows(t *testing.T) {
	s := newSim(t, 20)
	lo, hi := around(20)
	for _, q := range []time.Duration{20 * time.Millisecond, 100 * time.Millisecond, 20 * time.Millisecond} {
		s.query = q
		low := s.run("query "+q.String(), 20*time.Second, lo, hi)
		if low < 20*9/10*9/10 {
			t.Fatalf("query %s: the limit went down to %d, want at most two cuts below the pool of 20", q, low)
		}
	}
}

// A limit that binds nothing learns nothing: with the permits never all
// held it keeps its value, and a window of waits lowers it only when more
// than a few acquires waited.
func TestPoolLimitHoldsWithoutEvidence(t *testing.T) {
	s := newSim(t, 20)
	for range 50 {
		s.waits.Acquires += 100
		s.now = s.now.Add(poolWindow)
		r, ok := s.p.tryAcquire()
		if !ok {
			t.Fatal("no permit free")
		}
		r(true)
	}
	if l := s.p.limit(); l != 20 {
		t.Errorf("limit %d after idle windows, want its start, 20", l)
	}
	s.waits.Acquires += 100
	s.waits.Waited++ // a readiness ping
	s.now = s.now.Add(poolWindow)
	s.p.binding.Store(true)
	s.p.tick()
	if l := s.p.limit(); l != 21 {
		t.Errorf("limit %d after a binding window with 1%% waits, want 21", l)
	}
}

// Signals says what the pool-watching limit last decided on, and only
// for that limit.
func TestSignals(t *testing.T) {
	waits := PoolWaits{}
	l, _ := newLimiter(t, Config{Adaptive: true, Min: 1, Max: 200, PoolWaits: func() PoolWaits { return waits }})
	p := l.permits.(*poolLimit)
	now := time.Unix(0, 0)
	p.now, p.lastAt = func() time.Time { return now }, now
	p.due.Store(now.Add(poolWindow).UnixNano())
	waits = PoolWaits{Acquires: 100, Waited: 25}
	now = now.Add(poolWindow)
	p.tick()
	if share, _, ok := l.Signals(); share != 0.25 || !ok {
		t.Errorf("Signals = %v, %v; want a pool wait share of 0.25", share, ok)
	}
	fixed, _ := newLimiter(t, Config{Permits: 5})
	if _, _, ok := fixed.Signals(); ok {
		t.Error("a fixed limit has signals")
	}
}

// Once the limit has found the pool it probes one above it seldom: each
// probe makes its window's acquires wait, so after the first few it waits
// longer (to maxProbeEvery windows) before the next; and it does not fall
// below the pool, where a connection would idle. Also where a window holds
// few acquires (100 ms queries: 20 a window; a pool of 10: 50), so that
// the waits still ending after a cut are a large share of the next one.
func TestPoolLimitProbesTheFoundPoolSeldom(t *testing.T) {
	for _, c := range []struct {
		pool  int
		query time.Duration
	}{{20, 20 * time.Millisecond}, {20, 100 * time.Millisecond}, {10, 20 * time.Millisecond}} {
		s := newSim(t, c.pool)
		s.query = c.query
		what := fmt.Sprintf("pool %d, %s queries", c.pool, c.query)
		s.run(what, 10*time.Second, c.pool, c.pool+1)
		windows, over, under := 0, 0, 0
		for i := range 20_000 {
			s.ms()
			if (i+1)%100 == 0 {
				windows++
				switch l := s.p.limit(); {
				case l > c.pool:
					over++
				case l < c.pool:
					under++
				}
			}
		}
		if over == 0 || over*(maxProbeEvery/2) > windows || under*20 > windows {
			t.Errorf("%s: %d of %d windows above the pool, %d below; want at least one probe, at most one in %d above, at most one in 20 below",
				what, over, windows, under, maxProbeEvery/2)
		}
	}
}

// A probe's waits are counted as they end, a window late, and the holds of
// that window include them. The latency signal leaves such a window to the
// pool signal: no latency cut right after a probe, nor with acquires
// waiting.
func TestLatencyLeavesAClimbsWaitsToThePool(t *testing.T) {
	p, w, now := drivenPoolLimit(t)
	window := func(acquires, waited int64, holds time.Duration) {
		w.Acquires += acquires
		w.Waited += waited
		w.WaitTime += time.Duration(waited) * 2 * time.Millisecond
		for range holdSamples {
			p.held.add(holds)
		}
		*now = now.Add(poolWindow)
		p.adjust(*now)
	}
	// At a pool of 10, with a 20 ms baseline, the last probe found the
	// ceiling at 11 and backs off 4 windows; then it probes again.
	p.cur, p.base, p.ceiling, p.probeEvery, p.quiet, p.climbed = 11, 20*time.Millisecond, 11, 4, 4, true
	p.g.Resize(11)
	// The window after the climb: its waits not counted yet, the holds
	// that include them twice the baseline.
	window(50, 0, 40*time.Millisecond)
	if p.cur < 11 || p.judging != 0 {
		t.Fatalf("limit %d (judging %s) after the window that followed a probe: a latency cut took its verdict", p.cur, p.judging)
	}
	// Some waits counted now, within the 2 %, the holds still long.
	p.climbed = false
	window(50, 1, 40*time.Millisecond)
	if p.cur < 11 || p.judging != 0 {
		t.Fatalf("limit %d (judging %s) in a window with a waited acquire: a latency cut", p.cur, p.judging)
	}
	// Without a wait and long after any climb, a rise of the holds is the
	// latency signal's: a cut of a tenth.
	window(50, 0, 40*time.Millisecond)
	if p.cur != 9 || p.judging == 0 {
		t.Fatalf("limit %d (judging %s): holds twice the baseline with no wait and no climb cut nothing", p.cur, p.judging)
	}
}

// Windows end on requests, so the first one after a lull spans it. A pool
// that shrank from 20 to 10 during the lull (a pause between two loads,
// DB_MAX_CONNS changed in it) is not judged on waits spread over that
// whole window, which read as one permit too many (a cut of one, then a
// window to settle: everyone waited for two windows), but on the first
// window of traffic: a cut by the excess its waits measure.
func TestPoolLimitJudgesNoWindowAcrossALull(t *testing.T) {
	p, w, now := drivenPoolLimit(t)
	window := func(d time.Duration, acquires int64, wait time.Duration) {
		w.Acquires += acquires
		w.Waited += acquires
		w.WaitTime += time.Duration(acquires) * wait
		*now = now.Add(d)
		p.binding.Store(true)
		p.adjust(*now)
	}
	// 4 s without a request, then the first requests on the new pool of
	// 10 wait for its connections to be made.
	window(4*time.Second, 10, 10*time.Millisecond)
	if p.cur != 20 || p.settling {
		t.Fatalf("limit %d (settling %v) after a window across a 4 s lull: it was judged", p.cur, p.settling)
	}
	// The first window of traffic: 20 permits, 10 connections; 45
	// acquires, each waiting for a hold of 20 ms.
	window(poolWindow, 45, 20*time.Millisecond)
	if p.cur > 11 {
		t.Fatalf("limit %d after the first window of traffic on a pool of 10 (waits of 9 requests on average), want at most 11", p.cur)
	}
	// A lull right after that cut: the requests that were waiting then
	// ended their waits in it, so the window after it is judged, not
	// skipped as settling.
	window(4*time.Second, 0, 0)
	was := p.cur
	window(poolWindow, 45, 2*time.Millisecond)
	if p.cur != was-1 {
		t.Fatalf("limit %d after a window with every acquire waiting (one request on average) that followed a lull, want %d", p.cur, was-1)
	}
	// A slow load is no lull: windows of 300 ms, three requests each, all
	// waiting 200 ms (two on average) are judged.
	window(4*time.Second, 0, 0)
	was = p.cur
	window(300*time.Millisecond, 3, 200*time.Millisecond)
	if p.cur != was-2 {
		t.Fatalf("limit %d after a 300 ms window of a slow load with two requests waiting on average, want %d", p.cur, was-2)
	}
}

// After the pool shrinks, the probes above it keep the pace they had: each
// makes about a window of acquires wait for a connection. Starting them
// over from one window made six in the first three seconds.
func TestPoolLimitKeepsItsProbePaceWhenThePoolShrinks(t *testing.T) {
	s := newSim(t, 20)
	s.run("pool 20", 20*time.Second, 20, 21)
	s.pool = 10
	found, over := 0, 0
	for i := range 10_000 {
		s.ms()
		if (i+1)%100 != 0 {
			continue
		}
		l := s.p.limit()
		if found == 0 && l <= 10 {
			found = i + 1
		}
		if found > 0 && i+1 <= found+3000 && l > 10 {
			over++
		}
	}
	if found == 0 || found > 1000 {
		t.Fatalf("the limit found the pool of 10 after %d ms (0: never), want within a second", found)
	}
	if over > 2 {
		t.Errorf("%d windows above the shrunk pool in the 3 s after the limit found it, want at most 2 (a probe every 3 s)", over)
	}
}

// drivenPoolLimit is a pool-watching limit on a clock the test moves (now)
// over pool counters it sets (w); windows end where the test calls adjust.
func drivenPoolLimit(t *testing.T) (p *poolLimit, w *PoolWaits, now *time.Time) {
	t.Helper()
	w, now = new(PoolWaits), new(time.Time)
	*now = time.Unix(0, 0)
	p, err := newPoolLimit(Config{Adaptive: true, Min: 1, Max: 200, PoolWaits: func() PoolWaits { return *w }})
	if err != nil {
		t.Fatal(err)
	}
	p.now, p.lastAt = func() time.Time { return *now }, *now
	return p, w, now
}
