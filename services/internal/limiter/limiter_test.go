package limiter

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/goleak"

	"github.com/orderlab/orderlab/internal/poll"
	"github.com/orderlab/orderlab/services/internal/overload"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newLimiter(t *testing.T, cfg Config) (*Limiter, *prometheus.Registry) {
	reg := prometheus.NewRegistry()
	met, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	l, err := New(cfg, met)
	if err != nil {
		t.Fatal(err)
	}
	return l, reg
}

func rejections(l *Limiter, reason string) float64 {
	return testutil.ToFloat64(l.met.rejections.WithLabelValues(reason))
}

func TestRejectsWhenFullAndRecoversOnRelease(t *testing.T) {
	l, _ := newLimiter(t, Config{Permits: 2, Wait: 20 * time.Millisecond})
	r1, err1 := l.Acquire(context.Background())
	r2, err2 := l.Acquire(context.Background())
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if got := l.met.inUse.Load(); got != 2 {
		t.Errorf("in use = %d, want 2", got)
	}
	_, err := l.Acquire(context.Background())
	var rej *overload.RejectedError
	if !errors.As(err, &rej) || rej.Waited < 20*time.Millisecond {
		t.Fatalf("third Acquire = %v, want a rejection after LIMIT_WAIT", err)
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
	if got := l.met.inUse.Load(); got != 0 {
		t.Errorf("in use after releases = %d", got)
	}
}

func TestWaiterGetsReleasedPermit(t *testing.T) {
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
	poll.Until(t, 5*time.Second, "the second Acquire waiting for the permit", func() error {
		if n := l.waiters.Load(); n != 1 {
			return fmt.Errorf("%d waiters", n)
		}
		return nil
	})
	r1.Release(true)
	if err := <-got; err != nil {
		t.Fatalf("waiter = %v, want the released permit", err)
	}
}

func TestZeroWaitRejectsAtOnceAndCanceledIsNotARejection(t *testing.T) {
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
}

// The limit is exported for both modes, with the mode as a label.
func TestLimitMetric(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		mode string
		want float64
	}{
		{Config{Permits: 7}, "fixed", 7},
		{Config{Adaptive: true, Min: 1, Max: 200}, "adaptive", 20}, // failsafe-go's initial limit
		{Config{Adaptive: true, Min: 1, Max: 5}, "adaptive", 5},
	} {
		l, reg := newLimiter(t, tc.cfg)
		if got := l.Limit(); float64(got) != tc.want {
			t.Errorf("%+v: Limit = %d, want %v", tc.cfg, got, tc.want)
		}
		fams, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, f := range fams {
			if f.GetName() != "orderlab_limiter_limit" {
				continue
			}
			m := f.GetMetric()[0]
			found = m.GetGauge().GetValue() == tc.want && m.GetLabel()[0].GetValue() == tc.mode
		}
		if !found {
			t.Errorf("%+v: no orderlab_limiter_limit{mode=%q} %v", tc.cfg, tc.mode, tc.want)
		}
	}
}

// The adaptive limit queues up to twice its limit, refuses a growing share
// of waiters beyond that and all of them at three times it, as queue_full.
func TestAdaptiveQueueIsBounded(t *testing.T) {
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
		// Wait until this attempt has queued or been refused.
		poll.Until(t, 5*time.Second, fmt.Sprintf("attempt %d queued or refused", i+1), func() error {
			if n := a.lim.Queued() + int(rejections(l, ReasonQueueFull)); n < i+1 {
				return fmt.Errorf("%d queued or refused", n)
			}
			return nil
		})
	}
	if q := a.lim.Queued(); q > 6 || q < 4 {
		t.Errorf("%d queued, want 4 (2 x limit) to 6 (3 x limit)", q)
	}
	if got := rejections(l, ReasonQueueFull); got < 1 {
		t.Errorf("rejections{reason=queue_full} = %v after %d attempts, want at least 1", got, attempts)
	}
	cancel()
	for range attempts {
		<-left
	}
	for _, tk := range held {
		tk.Release(true)
	}
	if l.met.inUse.Load() != 0 || l.waiters.Load() != 0 {
		t.Errorf("in use %d, waiters %d after all left", l.met.inUse.Load(), l.waiters.Load())
	}
}
