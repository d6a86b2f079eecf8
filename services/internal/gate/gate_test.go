package gate

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/orderlab/orderlab/internal/poll"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The tests run in testing/synctest bubbles: synctest.Wait returns once
// every goroutine the test started is blocked (in line for a permit, or
// done), so the line is looked at when it has settled, not polled; and a
// receive that nothing will ever satisfy fails by name at once, its
// deadline passing in the bubble's virtual time.

// never bounds a receive in a bubble: virtual time, so it costs nothing
// when the value comes and fails at once when it cannot.
const never = time.Hour

// queueWaiters starts n callers of Acquire, one after the other in line,
// each sending its number once it holds a permit. Their wait ends only
// with the test (t.Context), so that a test that failed leaves none behind.
func queueWaiters(t *testing.T, g *Gate, n int) <-chan int {
	t.Helper()
	served := make(chan int, n)
	for i := range n {
		go func() {
			if err := g.Acquire(t.Context()); err != nil {
				return // the test ended before this waiter was served
			}
			served <- i
		}()
		waitForWaiters(t, g, i+1)
	}
	return served
}

// waitForWaiters checks, once the bubble has settled, that n callers are
// in line for a permit.
func waitForWaiters(t *testing.T, g *Gate, n int) {
	t.Helper()
	synctest.Wait()
	if w := g.Waiting(); w != n {
		t.Fatalf("%d waiters queued, want %d", w, n)
	}
}

// next is the number of the next waiter served.
func next(t *testing.T, served <-chan int) int {
	t.Helper()
	return poll.Recv(t, never, "the next waiter served", served)
}

// A shrink keeps the permits held and admits nobody until fewer than the
// new size are held; a grow serves the waiters at once, in order.
func TestResize(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := New(3)
		for range 3 {
			if !g.TryAcquire() {
				t.Fatal("a free permit was refused")
			}
		}
		g.Resize(1)
		g.Release()
		if g.TryAcquire() {
			t.Fatal("admitted with 2 held after a shrink to 1")
		}
		g.Release()
		if g.TryAcquire() {
			t.Fatal("admitted with 1 held after a shrink to 1")
		}
		g.Release()
		if !g.TryAcquire() {
			t.Fatal("refused with none held")
		}
		order := queueWaiters(t, g, 3)
		g.Resize(3)
		// The first two in line are served (in either order of their sends).
		if a, b := next(t, order), next(t, order); a+b != 1 {
			t.Errorf("waiters %d and %d served first, want 0 and 1", a, b)
		}
		if g.Held() != 3 || g.Waiting() != 1 {
			t.Fatalf("held %d, waiting %d after a grow to 3, want 3 and 1", g.Held(), g.Waiting())
		}
		g.Release()
		if got := next(t, order); got != 2 {
			t.Errorf("the last waiter is %d", got)
		}
		for range 3 {
			g.Release()
		}
		if g.Held() != 0 || g.Size() != 3 {
			t.Errorf("held %d, size %d at the end", g.Held(), g.Size())
		}
	})
}

// A waiter whose ctx ends holds nothing and does not block the next one.
func TestAcquireCanceled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := New(1)
		if !g.TryAcquire() {
			t.Fatal("refused")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		defer cancel()
		start := time.Now()
		if err := g.Acquire(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Acquire of a held permit = %v, want its deadline's error", err)
		}
		// Virtual time: the wait is its deadline, exactly.
		if waited := time.Since(start); waited != 10*time.Millisecond {
			t.Errorf("Acquire gave up after %s, want its 10ms deadline", waited)
		}
		got := make(chan error, 1)
		go func() { got <- g.Acquire(t.Context()) }()
		waitForWaiters(t, g, 1)
		g.Release()
		if err := poll.Recv(t, never, "the waiter's Acquire", got); err != nil {
			t.Fatal(err)
		}
		g.Release()
		if g.Held() != 0 || g.Waiting() != 0 {
			t.Errorf("held %d, waiting %d", g.Held(), g.Waiting())
		}
	})
}

// Newest first, each freed permit goes to the waiter that came last; a
// switch back serves the longest waiting again.
func TestNewestFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := New(1)
		g.SetOrder(true)
		if !g.TryAcquire() {
			t.Fatal("a free permit was refused")
		}
		served := queueWaiters(t, g, 4)
		g.Release()
		if got := next(t, served); got != 3 {
			t.Fatalf("newest first: waiter %d served, want 3 (the last to come)", got)
		}
		g.Release()
		if got := next(t, served); got != 2 {
			t.Fatalf("newest first: waiter %d served next, want 2", got)
		}
		g.SetOrder(false)
		g.Release()
		if got := next(t, served); got != 0 {
			t.Fatalf("in arrival order: waiter %d served, want 0 (the longest waiting)", got)
		}
		g.Release()
		next(t, served)
		g.Release()
	})
}

// Newest first, a waiter that gives up leaves the line, and the freed
// permit goes to the newest of those still waiting.
func TestNewestFirstSkipsACanceledWaiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := New(1)
		g.SetOrder(true)
		if !g.TryAcquire() {
			t.Fatal("a free permit was refused")
		}
		served := queueWaiters(t, g, 2) // waiters 0 and 1
		ctx, cancel := context.WithCancel(context.Background())
		canceled := make(chan error, 1)
		go func() { canceled <- g.Acquire(ctx) }()
		waitForWaiters(t, g, 3)
		cancel()
		if err := poll.Recv(t, never, "the canceled waiter's Acquire", canceled); !errors.Is(err, context.Canceled) {
			t.Fatalf("the canceled waiter: %v, want context.Canceled", err)
		}
		g.Release()
		if got := next(t, served); got != 1 {
			t.Fatalf("waiter %d served after the newest gave up, want 1", got)
		}
		g.Release()
		next(t, served)
		g.Release()
		if g.Held() != 0 || g.Waiting() != 0 {
			t.Errorf("held %d, waiting %d at the end", g.Held(), g.Waiting())
		}
	})
}
