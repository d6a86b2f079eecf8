package audit

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/goleak"

	"github.com/orderlab/orderlab/services/internal/order"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// AUDIT_DELAY changes live: it turns auditing on and off and sets how long
// the writes that start afterwards take.
func TestSetDelay(t *testing.T) {
	r, err := New(0, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	if r.Enabled() {
		t.Fatal("enabled with AUDIT_DELAY=0")
	}
	r.SetDelay(50 * time.Millisecond)
	if !r.Enabled() || r.Delay() != 50*time.Millisecond {
		t.Fatalf("after SetDelay(50ms): enabled %v, delay %s", r.Enabled(), r.Delay())
	}
	start := time.Now()
	r.Go(order.Order{ID: 1})
	if err := r.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 50*time.Millisecond {
		t.Errorf("a write at AUDIT_DELAY=50ms took %s", took)
	}
	r.SetDelay(-time.Second)
	if r.Enabled() || r.Delay() != 0 {
		t.Errorf("after SetDelay(-1s): enabled %v, delay %s, want off", r.Enabled(), r.Delay())
	}
}

// Held writes stay pending, past their delay, until the hold is released.
func TestHoldWrites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, err := New(time.Millisecond, prometheus.NewRegistry())
		if err != nil {
			t.Fatal(err)
		}
		release := make(chan struct{})
		r.HoldWrites(release)
		r.Go(order.Order{ID: 1})
		r.Queued()
		go r.Write(order.Order{ID: 2})
		time.Sleep(time.Hour) // virtual: far past the delay
		if p := r.pending.Load(); p != 2 {
			t.Fatalf("%d writes pending an hour into a 1ms delay with the hold on, want 2", p)
		}
		close(release)
		synctest.Wait()
		if p := r.pending.Load(); p != 0 {
			t.Errorf("%d writes pending once the hold is released, want 0", p)
		}
		if err := r.Wait(context.Background()); err != nil {
			t.Error(err)
		}
	})
}
