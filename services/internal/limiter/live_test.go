package limiter

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/orderlab/orderlab/internal/poll"
	"github.com/orderlab/orderlab/services/internal/overload"
)

// limitGauge is orderlab_limiter_limit's one series: its value and mode.
func limitGauge(t *testing.T, reg *prometheus.Registry) (float64, string) {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == "orderlab_limiter_limit" {
			if len(f.GetMetric()) != 1 {
				t.Fatalf("%d series of orderlab_limiter_limit, want 1", len(f.GetMetric()))
			}
			m := f.GetMetric()[0]
			return m.GetGauge().GetValue(), m.GetLabel()[0].GetValue()
		}
	}
	t.Fatal("no orderlab_limiter_limit")
	return 0, ""
}

func acquire(t *testing.T, l *Limiter) *Permit {
	t.Helper()
	p, err := l.Acquire(context.Background())
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	return p
}

func rejected(l *Limiter) bool {
	p, err := l.Acquire(context.Background())
	if err == nil {
		p.Release()
		return false
	}
	var rej *overload.RejectedError
	return errors.As(err, &rej)
}

// A fixed shrink revokes no permit held and admits nobody until fewer than
// the new limit are held; a grow serves a waiter at once; the gauge
// follows.
func TestSetLimitFixedResize(t *testing.T) {
	l, reg := newLimiter(t, Config{Permits: 3})
	held := []*Permit{acquire(t, l), acquire(t, l), acquire(t, l)}
	if err := l.SetLimit(1, false); err != nil {
		t.Fatal(err)
	}
	if v, mode := limitGauge(t, reg); v != 1 || mode != "fixed" || l.Limit() != 1 {
		t.Errorf("after SetLimit(1): gauge %v{mode=%s}, Limit %d, want 1 fixed", v, mode, l.Limit())
	}
	held[0].Release()
	held[1].Release()
	if !rejected(l) {
		t.Error("admitted with 1 held at a limit of 1")
	}
	held[2].Release()
	p := acquire(t, l)
	l.SetWait(5 * time.Second)
	got := make(chan error, 1)
	go func() {
		q, err := l.Acquire(context.Background())
		if err == nil {
			q.Release()
		}
		got <- err
	}()
	poll.Until(t, 5*time.Second, "the waiter queued", func() error {
		if l.waiters.Load() != 1 {
			return errors.New("the waiter did not queue")
		}
		return nil
	})
	if err := l.SetLimit(2, false); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("a waiter at a grown limit: %v", err)
	}
	p.Release()
	if l.inUse.Load() != 0 {
		t.Errorf("%d in use at the end", l.inUse.Load())
	}
}

// Fixed -> adaptive -> fixed: held permits go back to the permits that
// issued them, new requests get the new mode's, the gauge's mode follows.
func TestSetLimitSwitchesMode(t *testing.T) {
	l, reg := newLimiter(t, Config{Permits: 2, Min: 1, Max: 200})
	old := l.cur.Load().permits.(*fixed)
	a, b := acquire(t, l), acquire(t, l)
	if err := l.SetLimit(0, true); err != nil {
		t.Fatal(err)
	}
	if v, mode := limitGauge(t, reg); v != 20 || mode != "adaptive" {
		t.Errorf("after SetLimit(adaptive): gauge %v{mode=%s}, want 20 adaptive", v, mode)
	}
	c := acquire(t, l) // the old fixed limit is full: this one is adaptive's
	a.Release()
	b.Release()
	if old.g.Held() != 0 {
		t.Errorf("the old fixed permits hold %d after their release", old.g.Held())
	}
	if err := l.SetLimit(0, true); err != nil {
		t.Fatal(err)
	}
	if err := l.SetLimit(1, false); err != nil {
		t.Fatal(err)
	}
	if v, mode := limitGauge(t, reg); v != 1 || mode != "fixed" {
		t.Errorf("after SetLimit(1): gauge %v{mode=%s}, want 1 fixed", v, mode)
	}
	d := acquire(t, l)
	if !rejected(l) {
		t.Error("a second permit at a limit of 1")
	}
	c.Release() // back to the adaptive limit
	d.Release()
	if l.inUse.Load() != 0 {
		t.Errorf("%d in use at the end", l.inUse.Load())
	}
}

// Bad values are errors and change nothing; bounds apply to an adaptive
// limit at once and to a fixed one at the next switch.
func TestSetLimitAndBoundsValidate(t *testing.T) {
	l, _ := newLimiter(t, Config{Permits: 4, Min: 1, Max: 200})
	if err := l.SetLimit(0, false); err == nil || l.Limit() != 4 {
		t.Errorf("SetLimit(0) = %v, Limit %d", err, l.Limit())
	}
	if err := l.SetBounds(5, 2); err == nil {
		t.Error("SetBounds(5, 2) accepted")
	}
	if err := l.SetBounds(1, 5); err != nil || l.Limit() != 4 {
		t.Errorf("SetBounds on a fixed limit = %v, Limit %d, want nil and 4", err, l.Limit())
	}
	if err := l.SetLimit(0, true); err != nil || l.Limit() != 5 {
		t.Errorf("adaptive with bounds 1..5 = %v, Limit %d, want 5", err, l.Limit())
	}
	if err := l.SetBounds(1, 3); err != nil || l.Limit() != 3 {
		t.Errorf("SetBounds(1, 3) on adaptive = %v, Limit %d, want 3", err, l.Limit())
	}
	if c := l.Config(); !c.Adaptive || c.Min != 1 || c.Max != 3 || c.Permits != 4 {
		t.Errorf("Config = %+v", c)
	}
}

// Changes of limit, mode and wait while requests come and go: nobody gets
// anything but a permit or a rejection, and every permit comes back.
func TestSetLimitUnderTraffic(t *testing.T) {
	l, _ := newLimiter(t, Config{Permits: 5, Min: 1, Max: 50, Wait: time.Millisecond})
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for ctx.Err() == nil {
				p, err := l.Acquire(context.Background())
				var rej *overload.RejectedError
				switch {
				case err == nil:
					time.Sleep(100 * time.Microsecond)
					p.Release()
				case !errors.As(err, &rej):
					t.Errorf("Acquire during changes: %v", err)
				}
			}
		})
	}
	for i := range 40 {
		var err error
		switch i % 4 {
		case 0:
			err = l.SetLimit(2, false)
		case 1:
			err = l.SetLimit(0, true)
		case 2:
			err = l.SetBounds(1, 10+i)
		case 3:
			err = l.SetLimit(8, false)
		}
		if err != nil {
			t.Fatal(err)
		}
		l.SetWait(time.Duration(i%3) * time.Millisecond)
		time.Sleep(2 * time.Millisecond)
	}
	stop()
	wg.Wait()
	if l.inUse.Load() != 0 || l.waiters.Load() != 0 {
		t.Errorf("in use %d, waiters %d after the traffic", l.inUse.Load(), l.waiters.Load())
	}
}

// LIMIT_ORDER=lifo, set live, gives a freed permit to the request that
// began waiting last; the waiters that came first are the ones that wait
// out LIMIT_WAIT.
func TestSetOrderNewestFirst(t *testing.T) {
	l, _ := newLimiter(t, Config{Permits: 1, Wait: time.Minute})
	l.SetOrder(true)
	if !l.Config().NewestFirst {
		t.Fatal("Config does not say newest first after SetOrder(true)")
	}
	p := acquire(t, l)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type answer struct {
		i   int
		err error
	}
	got := make(chan answer, 2)
	for i := range 2 {
		go func() {
			q, err := l.Acquire(ctx)
			got <- answer{i, err} // before the release, which lets the next in
			if err == nil {
				q.Release()
			}
		}()
		poll.Until(t, 5*time.Second, "the waiter queued", func() error {
			if l.waiters.Load() != int64(i+1) {
				return errors.New("the waiter did not queue")
			}
			return nil
		})
	}
	p.Release()
	if a := <-got; a.i != 1 || a.err != nil {
		t.Fatalf("first served: waiter %d (%v), want waiter 1, the newest", a.i, a.err)
	}
	if a := <-got; a.i != 0 || a.err != nil {
		t.Fatalf("then: waiter %d (%v), want waiter 0", a.i, a.err)
	}
	if l.inUse.Load() != 0 {
		t.Errorf("%d in use at the end", l.inUse.Load())
	}
}
