package limiter

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/orderlab/orderlab/internal/poll"
)

// With LIMIT_ORDER=lifo a freed permit goes to the newest waiter.
func TestNewestFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, _ := newLimiter(t, Config{Permits: 1, Wait: time.Minute, NewestFirst: true})
		line := l.permits.(*newestFirst).g
		p, err := l.Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
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
					q.Release(true)
				}
			}()
			// The waiter is in the line, not merely counted on its way there.
			synctest.Wait()
			if n := line.Waiting(); n != i+1 {
				t.Fatalf("%d in the line, want %d", n, i+1)
			}
		}
		p.Release(true)
		if a := poll.Recv(t, never, "the first waiter served", got); a.i != 1 || a.err != nil {
			t.Fatalf("first served: waiter %d (%v), want waiter 1, the newest", a.i, a.err)
		}
		if a := poll.Recv(t, never, "the second waiter served", got); a.i != 0 || a.err != nil {
			t.Fatalf("then: waiter %d (%v), want waiter 0", a.i, a.err)
		}
		// The last waiter releases after its answer.
		synctest.Wait()
		if n := inUse(l); n != 0 {
			t.Errorf("%d permits in use once every waiter is done, want 0", n)
		}
	})
}
