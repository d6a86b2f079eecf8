package limiter

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/orderlab/orderlab/internal/poll"
	"github.com/orderlab/orderlab/services/internal/overload"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The tests that wait run in testing/synctest bubbles: a LIMIT_WAIT passes
// in virtual time, exactly; synctest.Wait returns once every goroutine the
// test started is blocked, so a waiter is looked at when it has settled in
// line, not polled; and a receive that nothing will satisfy fails by name
// at once (its deadline, never, passes in virtual time).

// never bounds a receive in a bubble: virtual time, so it costs nothing
// when the value comes and fails at once when it cannot.
const never = time.Hour

func newLimiter(t *testing.T, cfg Config) (*Limiter, *counts) {
	c := &counts{}
	l, err := New(cfg, c)
	if err != nil {
		t.Fatal(err)
	}
	return l, c
}

// counts are Metrics that count what the tests look at.
type counts struct {
	mu             sync.Mutex
	rejected       map[string]int
	inUse, waiting atomic.Int64
}

func (c *counts) Limiting(*Limiter)                             {}
func (c *counts) Waited(context.Context, string, time.Duration) {}
func (c *counts) InUse(delta int)                               { c.inUse.Add(int64(delta)) }
func (c *counts) Waiting(delta int)                             { c.waiting.Add(int64(delta)) }
func (c *counts) Rejected(reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rejected == nil {
		c.rejected = map[string]int{}
	}
	c.rejected[reason]++
}

func rejections(l *Limiter, reason string) float64 {
	c := l.met.(*counts)
	c.mu.Lock()
	defer c.mu.Unlock()
	return float64(c.rejected[reason])
}

func inUse(l *Limiter) int64 { return l.met.(*counts).inUse.Load() }

func TestRejectsWhenFullAndRecoversOnRelease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, _ := newLimiter(t, Config{Permits: 2, Wait: 20 * time.Millisecond})
		r1, err1 := l.Acquire(context.Background())
		r2, err2 := l.Acquire(context.Background())
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if got := inUse(l); got != 2 {
			t.Errorf("in use = %d, want 2", got)
		}
		_, err := l.Acquire(context.Background())
		var rej *overload.RejectedError
		// Virtual time: the wait is LIMIT_WAIT, exactly.
		if !errors.As(err, &rej) || rej.Waited != 20*time.Millisecond {
			t.Fatalf("third Acquire = %v, want a rejection after LIMIT_WAIT (20ms)", err)
		}
		if rej.RetryAfter < overload.MinRetryAfter || rej.RetryAfter > overload.MaxRetryAfter {
			t.Errorf("RetryAfter = %s, want %s..%s", rej.RetryAfter, overload.MinRetryAfter, overload.MaxRetryAfter)
		}
		if got := rejections(l, ReasonWaitTimeout); got != 1 {
			t.Errorf("rejections{reason=wait_timeout} = %v, want 1", got)
		}
		r1.Release(true)
		r1.Release(true) // releasing twice gives back one permit, not two
		r3, err := l.Acquire(context.Background())
		if err != nil {
			t.Fatalf("Acquire after release = %v", err)
		}
		if _, err := l.Acquire(context.Background()); err == nil {
			t.Fatal("a double release created a permit")
		}
		r2.Release(true)
		r3.Release(true)
		if got := inUse(l); got != 0 {
			t.Errorf("in use after releases = %d", got)
		}
	})
}

func TestWaiterGetsReleasedPermit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, _ := newLimiter(t, Config{Permits: 1, Wait: 5 * time.Second})
		r1, _ := l.Acquire(context.Background())
		got := make(chan error, 1)
		go func() {
			r, err := l.Acquire(context.Background())
			if err == nil {
				r.Release(true)
			}
			got <- err
		}()
		synctest.Wait()
		if n := l.waiters.Load(); n != 1 {
			t.Fatalf("%d waiters for the held permit, want the second Acquire", n)
		}
		r1.Release(true)
		if err := poll.Recv(t, never, "the waiter's Acquire", got); err != nil {
			t.Fatalf("waiter = %v, want the released permit", err)
		}
	})
}

func TestZeroWaitRejectsAtOnceAndCanceledIsNotARejection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, _ := newLimiter(t, Config{Permits: 1})
		r, _ := l.Acquire(context.Background())
		defer r.Release(true)
		var rej *overload.RejectedError
		if _, err := l.Acquire(context.Background()); !errors.As(err, &rej) {
			t.Fatalf("Acquire = %v, want rejection", err)
		}
		if got := rejections(l, ReasonAtLimit); got != 1 {
			t.Errorf("rejections{reason=at_limit} = %v, want 1", got)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		l2, _ := newLimiter(t, Config{Permits: 1, Wait: time.Second})
		r2, _ := l2.Acquire(context.Background())
		defer r2.Release(true)
		if _, err := l2.Acquire(ctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("Acquire with canceled ctx = %v", err)
		}
		for _, reason := range []string{ReasonAtLimit, ReasonQueueFull, ReasonWaitTimeout} {
			if got := rejections(l2, reason); got != 0 {
				t.Errorf("a canceled wait counted as a rejection (%s)", reason)
			}
		}
	})
}

// The limit and the mode, for both modes.
func TestLimitAndMode(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		mode string
		want int
	}{
		{Config{Permits: 7}, "fixed", 7},
		{Config{Adaptive: true, Min: 1, Max: 200}, "adaptive", 20}, // failsafe-go's initial limit
		{Config{Adaptive: true, Min: 1, Max: 5}, "adaptive", 5},
	} {
		l, _ := newLimiter(t, tc.cfg)
		if l.Limit() != tc.want || l.Mode() != tc.mode {
			t.Errorf("%+v: Limit %d, Mode %q; want %d, %q", tc.cfg, l.Limit(), l.Mode(), tc.want, tc.mode)
		}
	}
}

// The adaptive limit queues up to twice its limit, refuses a growing share
// of waiters beyond that and all of them at three times it, as queue_full.
func TestAdaptiveQueueIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, _ := newLimiter(t, Config{Adaptive: true, Min: 2, Max: 2, Wait: 10 * time.Second})
		a := l.permits.(*adaptive)
		var held []*Permit
		for range 2 {
			tk, err := l.Acquire(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			held = append(held, tk)
		}
		ctx, cancel := context.WithCancel(context.Background())
		const attempts = 7 // one more than 3 x limit
		left := make(chan error, attempts)
		for i := range attempts {
			go func() {
				tk, err := l.Acquire(ctx)
				if err == nil {
					tk.Release(true)
				}
				left <- err
			}()
			// Once it has settled, this attempt has queued or been refused.
			synctest.Wait()
			if n := a.lim.Queued() + int(rejections(l, ReasonQueueFull)); n != i+1 {
				t.Fatalf("%d queued or refused after attempt %d", n, i+1)
			}
		}
		if q := a.lim.Queued(); q > 6 || q < 4 {
			t.Errorf("%d queued, want 4 (2 x limit) to 6 (3 x limit)", q)
		}
		if got := rejections(l, ReasonQueueFull); got < 1 {
			t.Errorf("rejections{reason=queue_full} = %v after %d attempts, want at least 1", got, attempts)
		}
		cancel()
		for i := range attempts {
			poll.Recv(t, never, fmt.Sprintf("attempt %d of %d leaving", i+1, attempts), left)
		}
		for _, tk := range held {
			tk.Release(true)
		}
		if inUse(l) != 0 || l.waiters.Load() != 0 {
			t.Errorf("in use %d, waiters %d after all left", inUse(l), l.waiters.Load())
		}
	})
}
