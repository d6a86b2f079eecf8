package swap_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/orderlab/orderlab/internal/poll"
	"github.com/orderlab/orderlab/services/internal/live/swap"
)

// Every test runs in a synctest bubble: time is the bubble's, so a wait
// that would hang fails at once by name (within), and synctest.Wait makes
// "not closed yet" a fact rather than a race.

// part is a generation's value that knows its holders, as the test counts
// them, and how often it was closed.
type part struct {
	name   string
	n      int64        // what Read adds up (the pool's counters)
	users  atomic.Int64 // holders the test let in and not yet out
	closes atomic.Int32
	closed chan struct{}
}

func newPart(name string, n int64) *part { return &part{name: name, n: n, closed: make(chan struct{})} }

// closer closes a part, and fails t when the part is closed while held or
// closed twice.
func closer(t *testing.T) func(context.Context, *part) error {
	return func(_ context.Context, p *part) error {
		if u := p.users.Load(); u != 0 {
			t.Errorf("%s closed with %d holders in", p.name, u)
		}
		if p.closes.Add(1) != 1 {
			t.Errorf("%s closed twice", p.name)
			return nil
		}
		close(p.closed)
		return nil
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// enter holds the current generation, as a request does.
func enter(t *testing.T, v *swap.Value[*part]) *swap.Generation[*part] {
	t.Helper()
	g, ok := v.Enter()
	if !ok {
		t.Fatal("Enter refused before Close")
	}
	g.Value().users.Add(1)
	return g
}

func leave(g *swap.Generation[*part]) {
	g.Value().users.Add(-1)
	g.Leave()
}

// A swap sends new holders to the new generation at once; the old one
// closes only once its last holder has left, on its own goroutine, and
// Closed hears it.
func TestSwapClosesTheOldOnceIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		first, second := newPart("first", 0), newPart("second", 0)
		heard := make(chan error, 1)
		v := swap.New(first, swap.Options[*part]{Close: closer(t), Closed: func(p *part, err error) {
			if p != first {
				t.Errorf("Closed heard %s, want first", p.name)
			}
			heard <- err
		}})
		inFlight := enter(t, v)
		old, err := v.Swap(second)
		if err != nil || old != first {
			t.Fatalf("Swap = %v, %v; want first, nil", old, err)
		}
		if g := enter(t, v); g.Value() != second {
			t.Fatalf("after the swap Enter held %s, want second", g.Value().name)
		} else {
			leave(g)
		}
		synctest.Wait()
		if isClosed(first.closed) {
			t.Fatal("the old generation closed while a holder was in")
		}
		leave(inFlight)
		poll.Recv(t, time.Second, "the old generation's close once idle", first.closed)
		select {
		case err := <-heard:
			if err != nil {
				t.Errorf("Closed heard %v, want nil", err)
			}
		case <-time.After(time.Second):
			t.Fatal("Closed did not hear the old generation")
		}
		if isClosed(second.closed) {
			t.Error("the current generation closed")
		}
		if v.Current() != second {
			t.Errorf("Current = %s, want second", v.Current().name)
		}
	})
}

// An old generation held past Within is given up on: Closed hears why,
// and its value is never closed under a holder.
func TestSwapGivesUpOnAGenerationHeldPastWithin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		first := newPart("first", 0)
		heard := make(chan error, 1)
		v := swap.New(first, swap.Options[*part]{Close: closer(t), Within: func() time.Duration { return 5 * time.Second },
			Closed: func(_ *part, err error) { heard <- err }})
		stuck := enter(t, v)
		start := time.Now()
		if _, err := v.Swap(newPart("second", 0)); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-heard:
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Closed heard %v, want a deadline", err)
			}
			if d := time.Since(start); d != 5*time.Second {
				t.Errorf("given up on after %s, want Within, 5s", d)
			}
		case <-time.After(time.Minute):
			t.Fatal("Closed did not hear the generation held past Within")
		}
		if isClosed(first.closed) {
			t.Error("a generation given up on was closed under its holder")
		}
		leave(stuck)
	})
}

// Close waits for the current generation's holders and for the old
// generations still closing, then nothing enters and nothing swaps.
func TestCloseWaitsForEveryGeneration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		first, second := newPart("first", 0), newPart("second", 0)
		v := swap.New(first, swap.Options[*part]{Close: closer(t)})
		inFirst := enter(t, v)
		if _, err := v.Swap(second); err != nil {
			t.Fatal(err)
		}
		inSecond := enter(t, v)
		closed := make(chan struct{})
		var closeErr error
		go func() { closeErr = v.Close(context.Background()); close(closed) }()
		synctest.Wait()
		if isClosed(closed) || isClosed(second.closed) {
			t.Fatal("Close returned, or closed the current generation, under a holder")
		}
		if _, ok := v.Enter(); ok {
			t.Error("Enter admitted while closing")
		}
		leave(inSecond)
		poll.Recv(t, time.Second, "the current generation's close once idle", second.closed)
		synctest.Wait()
		if isClosed(closed) {
			t.Fatal("Close returned while an old generation was held")
		}
		leave(inFirst)
		poll.Recv(t, time.Second, "Close once every generation closed", closed)
		if closeErr != nil || !isClosed(first.closed) {
			t.Errorf("Close = %v, first closed %v; want nil, true", closeErr, isClosed(first.closed))
		}
		third := newPart("third", 0)
		if _, err := v.Swap(third); !errors.Is(err, swap.ErrClosed) {
			t.Errorf("Swap after Close = %v, want ErrClosed", err)
		}
		if err := v.Close(context.Background()); !errors.Is(err, swap.ErrClosed) {
			t.Errorf("a second Close = %v, want ErrClosed", err)
		}
	})
}

// Close gives up at its context's deadline, and says so.
func TestCloseIsBoundedByItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		first := newPart("first", 0)
		v := swap.New(first, swap.Options[*part]{Close: closer(t)})
		stuck := enter(t, v)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		start := time.Now()
		if err := v.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Close under a holder = %v, want its deadline", err)
		}
		if d := time.Since(start); d != 2*time.Second {
			t.Errorf("Close gave up after %s, want 2s", d)
		}
		leave(stuck)
	})
}

// Read sees every open generation once: a sum over them plus what Closed
// moved out of the closed ones (the pool's counters) neither drops nor
// counts twice across a swap and the old generation's close.
func TestReadCountsEachGenerationOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var base int64 // moved out of closed generations; guarded by Read's lock
		v := swap.New(newPart("first", 1), swap.Options[*part]{Close: closer(t),
			Closed: func(p *part, _ error) { base += p.n }})
		sum := func() (total int64, open int) {
			v.Read(func(cur *part, closing []*part) {
				total, open = base+cur.n, 1+len(closing)
				for _, p := range closing {
					total += p.n
				}
			})
			return total, open
		}
		held := enter(t, v)
		if _, err := v.Swap(newPart("second", 10)); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if total, open := sum(); total != 11 || open != 2 {
			t.Errorf("while the old one closes: %d in %d generations, want 11 in 2", total, open)
		}
		leave(held)
		synctest.Wait()
		if total, open := sum(); total != 11 || open != 1 {
			t.Errorf("after the old one closed: %d in %d generations, want 11 in 1", total, open)
		}
	})
}

// Holders entering and leaving while generations are swapped never find
// the Value closed, and every generation is closed once, with no holder.
func TestManySwapsUnderHolders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const swaps, holders = 20, 8
		var parts []*part
		v := swap.New(newPart("gen-0", 0), swap.Options[*part]{Close: closer(t)})
		parts = append(parts, v.Current())
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for range holders {
			wg.Go(func() {
				for !isClosed(stop) {
					g := enter(t, v)
					time.Sleep(time.Millisecond)
					leave(g)
				}
			})
		}
		for i := 1; i <= swaps; i++ {
			time.Sleep(3 * time.Millisecond)
			p := newPart(fmt.Sprintf("gen-%d", i), 0)
			parts = append(parts, p)
			if _, err := v.Swap(p); err != nil {
				t.Fatal(err)
			}
		}
		close(stop)
		wg.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := v.Close(ctx); err != nil {
			t.Fatal(err)
		}
		for _, p := range parts {
			if n := p.closes.Load(); n != 1 {
				t.Errorf("%s closed %d times, want once", p.name, n)
			}
		}
	})
}
