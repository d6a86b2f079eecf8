package live

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/orderlab/orderlab/services/internal/knob"
	"github.com/orderlab/orderlab/services/internal/model"
	"github.com/orderlab/orderlab/services/internal/overload"
)

// Model is the model in use, behind one pointer: the one mechanism by
// which a model's knobs change live (docs/reference/knobs.md, "During a
// swap"). A model never changes once built; a change of one of its knobs
// builds a new generation from the new set and swaps it in. The old one
// admits nothing more; once every request it admitted has been answered it
// closes (a pipeline drains its queues), on a goroutine of its own, so the
// change returns at once. Both generations hold requests for that while.
type Model struct {
	cur   atomic.Pointer[generation]
	build func(*knob.Set) (model.Model, error)
	log   *slog.Logger
	// closeWithin bounds an old generation's close once its requests are
	// answered.
	closeWithin func() time.Duration
	retiring    sync.WaitGroup
}

var _ model.Model = (*Model)(nil)

// generation is one built model, and the requests it admitted.
type generation struct {
	m       model.Model
	mu      sync.Mutex
	held    int  // admitted and not released
	retired bool // admits nothing more
	idle    chan struct{}
}

// NewModel builds the first generation of the model from first.
func NewModel(build func(*knob.Set) (model.Model, error), first *knob.Set, log *slog.Logger, closeWithin func() time.Duration) (*Model, error) {
	m, err := build(first)
	if err != nil {
		return nil, err
	}
	g := &Model{build: build, log: log, closeWithin: closeWithin}
	g.cur.Store(&generation{m: m, idle: make(chan struct{})})
	return g, nil
}

// Admit admits the request into the current generation.
func (g *Model) Admit(ctx context.Context, op model.Op) (model.Admitted, error) {
	for {
		gen := g.cur.Load()
		if !gen.enter() {
			if g.cur.Load() == gen { // retired with no successor: shutting down
				return nil, overload.ErrShuttingDown
			}
			continue // swapped out under us: the new one admits
		}
		a, err := gen.m.Admit(ctx, op)
		if err != nil {
			gen.leave()
			return nil, err
		}
		return &held{Admitted: a, gen: gen}, nil
	}
}

// held is a request a generation admitted and holds until its release,
// which also counts it out of the generation.
type held struct {
	model.Admitted
	gen  *generation
	once atomic.Bool
}

func (a *held) Release(done bool) {
	if a.once.CompareAndSwap(false, true) {
		a.Admitted.Release(done)
		a.gen.leave()
	}
}

func (gen *generation) enter() bool {
	gen.mu.Lock()
	defer gen.mu.Unlock()
	if gen.retired {
		return false
	}
	gen.held++
	return true
}

func (gen *generation) leave() {
	gen.mu.Lock()
	defer gen.mu.Unlock()
	gen.held--
	if gen.retired && gen.held == 0 {
		close(gen.idle)
	}
}

// retire stops gen admitting; idle is closed once its requests are out.
func (gen *generation) retire() {
	gen.mu.Lock()
	defer gen.mu.Unlock()
	if gen.retired {
		return
	}
	gen.retired = true
	if gen.held == 0 {
		close(gen.idle)
	}
}

// close waits for gen's requests to be answered, then closes its model.
func (gen *generation) close(ctx context.Context) error {
	gen.retire()
	select {
	case <-gen.idle:
	case <-ctx.Done():
		return fmt.Errorf("%w while requests were in flight", ctx.Err())
	}
	return gen.m.Close(ctx)
}

// Swap builds a generation from next and makes it current; the old one
// drains and closes in the background. A build that fails changes nothing.
func (g *Model) Swap(next *knob.Set) error {
	m, err := g.build(next)
	if err != nil {
		return err
	}
	old := g.cur.Swap(&generation{m: m, idle: make(chan struct{})})
	g.retiring.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), g.closeWithin())
		defer cancel()
		if err := old.close(ctx); err != nil {
			g.log.Error("closing the model's old generation", "err", err)
		}
	})
	return nil
}

// Close closes the current generation, and waits for the old ones still
// closing, within ctx.
func (g *Model) Close(ctx context.Context) error {
	err := g.cur.Load().close(ctx)
	done := make(chan struct{})
	go func() { g.retiring.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		err = errors.Join(err, fmt.Errorf("old generations: %w", ctx.Err()))
	}
	return err
}
