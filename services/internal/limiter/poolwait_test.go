package limiter

import (
	"testing"
	"time"
)

// fakePool is the signal of a pool of size connections under a load that
// always wants more permits than the limit gives: of the acquires made
// while held permits are in use, the share above the pool's size waits.
type fakePool struct {
	size  int
	waits PoolWaits
}

func (f *fakePool) read() PoolWaits { return f.waits }

// window is one poolWindow of work with held permits in use: 100 acquires.
func (f *fakePool) window(held int) {
	f.waits.Acquires += 100
	if held > f.size {
		waited := int64(100 * (held - f.size) / held)
		f.waits.Waited += waited
		f.waits.WaitTime += time.Duration(waited) * time.Millisecond
	}
}

// stepper drives a poolLimit window by window on a clock of its own.
type stepper struct {
	t    *testing.T
	p    *poolLimit
	pool *fakePool
	now  time.Time
}

func newStepper(t *testing.T, poolSize int) *stepper {
	s := &stepper{t: t, pool: &fakePool{size: poolSize}, now: time.Unix(0, 0)}
	p, err := newPoolLimit(Config{Adaptive: true, Min: 1, Max: 200, PoolWaits: s.pool.read})
	if err != nil {
		t.Fatal(err)
	}
	p.now = func() time.Time { return s.now }
	p.due.Store(s.now.Add(poolWindow).UnixNano())
	s.p = p
	return s
}

// step runs one window: every permit the limit gives is taken (one more
// request is turned away: the limit binds), the pool sees them at work,
// the clock moves past the window and the permits are given back, the
// first release ending the window.
func (s *stepper) step() int {
	var held []func(bool)
	for {
		r, ok := s.p.tryAcquire()
		if !ok {
			break
		}
		held = append(held, r)
	}
	s.pool.window(len(held))
	s.now = s.now.Add(poolWindow)
	for _, r := range held {
		r(true)
	}
	return s.p.limit()
}

// settle steps for d and fails unless the limit is within 20% of want by
// 10 s into it and stays there.
func (s *stepper) settle(what string, d time.Duration, want int) {
	s.t.Helper()
	var trace []int
	for i := range int(d / poolWindow) {
		l := s.step()
		trace = append(trace, l)
		if time.Duration(i+1)*poolWindow >= 10*time.Second && (l < want*8/10 || l > want*12/10) {
			s.t.Fatalf("%s: limit %d after %s, want %d ± 20%%; limits by window: %v",
				what, l, time.Duration(i+1)*poolWindow, want, trace)
		}
	}
}

// The limit follows the pool's size, told nothing of it: from its start of
// 20 down to a pool of 10, up to a pool of 60, down to 20; each within 10 s,
// and there it stays.
func TestPoolLimitFollowsThePool(t *testing.T) {
	s := newStepper(t, 10)
	s.settle("pool 10", 20*time.Second, 10)
	s.pool.size = 60
	s.settle("pool 60", 20*time.Second, 60)
	s.pool.size = 20
	s.settle("pool 20", 20*time.Second, 20)
}

// A limit that binds nothing learns nothing: with the permits never all
// held it keeps its value, and a window of waits lowers it only when more
// than a few acquires waited.
func TestPoolLimitHoldsWithoutEvidence(t *testing.T) {
	s := newStepper(t, 20)
	for range 50 {
		s.pool.waits.Acquires += 100
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
	s.pool.waits.Acquires += 100
	s.pool.waits.Waited++ // a readiness ping
	s.now = s.now.Add(poolWindow)
	s.p.binding.Store(true)
	s.p.tick()
	if l := s.p.limit(); l != 21 {
		t.Errorf("limit %d after a binding window with 1%% waits, want 21", l)
	}
}
