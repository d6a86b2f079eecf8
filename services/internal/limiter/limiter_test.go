package limiter

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.opentelemetry.io/otel/trace/noop"
	"go.uber.org/goleak"

	"github.com/orderlab/orderlab/services/internal/overload"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newLimiter(t *testing.T, permits int64, wait time.Duration) *Limiter {
	l, err := New(permits, wait, prometheus.NewRegistry(), noop.NewTracerProvider())
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestRejectsWhenFullAndRecoversOnRelease(t *testing.T) {
	l := newLimiter(t, 2, 20*time.Millisecond)
	r1, err1 := l.Acquire(context.Background())
	r2, err2 := l.Acquire(context.Background())
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if got := l.inUse.Load(); got != 2 {
		t.Errorf("in use = %d, want 2", got)
	}
	_, err := l.Acquire(context.Background())
	var rej *overload.RejectedError
	if !errors.As(err, &rej) || rej.RetryAfter != overload.RetryAfter || rej.Waited < 20*time.Millisecond {
		t.Fatalf("third Acquire = %v, want a rejection after LIMIT_WAIT", err)
	}
	if got := testutil.ToFloat64(l.rejections); got != 1 {
		t.Errorf("rejections = %v, want 1", got)
	}
	r1()
	r1() // releasing twice gives back one permit, not two
	r3, err := l.Acquire(context.Background())
	if err != nil {
		t.Fatalf("Acquire after release = %v", err)
	}
	if _, err := l.Acquire(context.Background()); err == nil {
		t.Fatal("a double release created a permit")
	}
	r2()
	r3()
	if got := l.inUse.Load(); got != 0 {
		t.Errorf("in use after releases = %d", got)
	}
}

func TestWaiterGetsReleasedPermit(t *testing.T) {
	l := newLimiter(t, 1, 5*time.Second)
	r1, _ := l.Acquire(context.Background())
	got := make(chan error, 1)
	go func() {
		r, err := l.Acquire(context.Background())
		if err == nil {
			r()
		}
		got <- err
	}()
	for l.waiters.Load() != 1 {
		time.Sleep(time.Millisecond)
	}
	r1()
	if err := <-got; err != nil {
		t.Fatalf("waiter = %v, want the released permit", err)
	}
}

func TestZeroWaitRejectsAtOnceAndCanceledIsNotARejection(t *testing.T) {
	l := newLimiter(t, 1, 0)
	r, _ := l.Acquire(context.Background())
	defer r()
	var rej *overload.RejectedError
	if _, err := l.Acquire(context.Background()); !errors.As(err, &rej) {
		t.Fatalf("Acquire = %v, want rejection", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	l2 := newLimiter(t, 1, time.Second)
	r2, _ := l2.Acquire(context.Background())
	defer r2()
	if _, err := l2.Acquire(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Acquire with canceled ctx = %v", err)
	}
	if got := testutil.ToFloat64(l2.rejections); got != 0 {
		t.Errorf("a canceled wait counted as a rejection")
	}
}
