package audit

import (
	"context"
	"testing"
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
