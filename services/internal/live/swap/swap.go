// Package swap is how a part of a service changes while it serves, without
// a gap: the one mechanism behind the model's live knobs and the pool's
// (docs/reference/knobs.md, "During a swap"). A Value holds the current
// generation of a part and the ones it replaced that are still closing. A
// generation never changes once built; a change builds a new one and swaps
// it in. The old one admits nothing more, and once idle (every holder that
// entered it has left) it closes on a goroutine of its own, so the change
// returns at once.
package swap

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Options say how a Value closes its generations.
type Options[T any] struct {
	// Close closes a generation's value once it is idle, within ctx. A part
	// that counts its own users and waits for them when closed (pgxpool)
	// enters nothing, so that its generations are idle at once.
	Close func(ctx context.Context, v T) error
	// Within bounds a replaced generation's wait to be idle and its close
	// together; nil: no bound.
	Within func() time.Duration
	// Closed, if set, hears each replaced generation once it is closed, or
	// given up on (err), under the lock that Read holds: what Closed moves
	// out of a closed value, Read sees exactly once.
	Closed func(v T, err error)
}

// Value is the current generation of a T, and those it replaced that are
// still closing.
type Value[T any] struct {
	opt     Options[T]
	cur     atomic.Pointer[Generation[T]]
	closing sync.WaitGroup

	mu     sync.Mutex // serialises Swap, Close and Read, and guards:
	old    []*Generation[T]
	closed bool
}

// Generation is one value of a Value, and the holders it admitted.
type Generation[T any] struct {
	v       T
	mu      sync.Mutex
	held    int  // entered and not left
	retired bool // admits nothing more
	idle    chan struct{}
}

// ErrClosed is a Swap after Close.
var ErrClosed = errors.New("swap: closed")

// New returns a Value whose first generation is first.
func New[T any](first T, opt Options[T]) *Value[T] {
	s := &Value[T]{opt: opt}
	s.cur.Store(newGeneration(first))
	return s
}

func newGeneration[T any](v T) *Generation[T] {
	return &Generation[T]{v: v, idle: make(chan struct{})}
}

// Current is the current generation's value, not held: for a part that
// counts its own users.
func (s *Value[T]) Current() T { return s.cur.Load().v }

// Enter holds the current generation until Leave: it does not close before.
// It is false only after Close.
func (s *Value[T]) Enter() (*Generation[T], bool) {
	for {
		g := s.cur.Load()
		if g.enter() {
			return g, true
		}
		if s.cur.Load() == g { // retired with no successor: closed
			return nil, false
		}
		// swapped out under us: the new one admits
	}
}

// Value is the generation's value.
func (g *Generation[T]) Value() T { return g.v }

// Leave lets go of the generation, once for each Enter.
func (g *Generation[T]) Leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.held--
	if g.retired && g.held == 0 {
		close(g.idle)
	}
}

func (g *Generation[T]) enter() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.retired {
		return false
	}
	g.held++
	return true
}

// retire stops g admitting; idle is closed once its holders have left.
func (g *Generation[T]) retire() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.retired {
		return
	}
	g.retired = true
	if g.held == 0 {
		close(g.idle)
	}
}

// close retires g, waits for it to be idle, then closes its value.
func (g *Generation[T]) close(ctx context.Context, closeValue func(context.Context, T) error) error {
	g.retire()
	select {
	case <-g.idle:
	case <-ctx.Done():
		return fmt.Errorf("%w while it was held", ctx.Err())
	}
	return closeValue(ctx, g.v)
}

// Swap makes next the current generation and returns the value it
// replaced, which closes in the background once idle. After Close it
// changes nothing and returns ErrClosed: next is still the caller's.
func (s *Value[T]) Swap(next T) (T, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		var zero T
		return zero, ErrClosed
	}
	old := s.cur.Swap(newGeneration(next))
	s.old = append(s.old, old)
	s.closing.Go(func() { s.retire(old) })
	return old.v, nil
}

func (s *Value[T]) retire(g *Generation[T]) {
	ctx := context.Background()
	if s.opt.Within != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.opt.Within())
		defer cancel()
	}
	err := g.close(ctx, s.opt.Close)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.old = slices.DeleteFunc(s.old, func(o *Generation[T]) bool { return o == g })
	if s.opt.Closed != nil {
		s.opt.Closed(g.v, err)
	}
}

// Read calls f with the current value and the replaced ones still
// closing, oldest first, under the lock that Swap and Closed take: f sees
// every open generation once, and none that Closed has had. f (and Closed)
// must not call back into s.
func (s *Value[T]) Read(f func(cur T, closing []T)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	closing := make([]T, len(s.old))
	for i, g := range s.old {
		closing[i] = g.v
	}
	f(s.cur.Load().v, closing)
}

// Close stops every later Swap and Enter, waits for the current generation
// to be idle and closes it, then waits for the replaced ones still
// closing, all within ctx. A second Close returns ErrClosed.
func (s *Value[T]) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	s.closed = true
	s.mu.Unlock()
	err := s.cur.Load().close(ctx, s.opt.Close)
	done := make(chan struct{})
	go func() { s.closing.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		err = errors.Join(err, fmt.Errorf("replaced generations still closing: %w", ctx.Err()))
	}
	return err
}
