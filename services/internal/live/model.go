package live

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/orderlab/orderlab/services/internal/knob"
	"github.com/orderlab/orderlab/services/internal/live/swap"
	"github.com/orderlab/orderlab/services/internal/model"
	"github.com/orderlab/orderlab/services/internal/overload"
)

// Model is the model in use: the generations of the model, swapped as the
// pool's are (swap), the one mechanism by which a model's knobs change live
// (docs/reference/knobs.md, "During a swap"). A model never changes once
// built; a change of one of its knobs builds a new generation from the new
// set and swaps it in. The old one admits nothing more; once every request
// it admitted has been answered it closes (a pipeline drains its queues),
// so the change returns at once. Both generations hold requests for that
// while.
type Model struct {
	gens  *swap.Value[model.Model]
	build func(*knob.Set) (model.Model, error)
}

var _ model.Model = (*Model)(nil)

// NewModel builds the first generation of the model from first.
// closeWithin bounds an old generation's wait for its requests and its
// close.
func NewModel(build func(*knob.Set) (model.Model, error), first *knob.Set, log *slog.Logger, closeWithin func() time.Duration) (*Model, error) {
	m, err := build(first)
	if err != nil {
		return nil, err
	}
	return &Model{build: build, gens: swap.New(m, swap.Options[model.Model]{
		Close:  func(ctx context.Context, m model.Model) error { return m.Close(ctx) },
		Within: closeWithin,
		Closed: func(_ model.Model, err error) {
			if err != nil {
				log.Error("closing the model's old generation", "err", err)
			}
		},
	})}, nil
}

// Admit admits the request into the current generation, which holds it
// until its release.
func (m *Model) Admit(ctx context.Context, op model.Op) (model.Admitted, error) {
	gen, ok := m.gens.Enter()
	if !ok {
		return nil, overload.ErrShuttingDown
	}
	a, err := gen.Value().Admit(ctx, op)
	if err != nil {
		gen.Leave()
		return nil, err
	}
	return &held{Admitted: a, gen: gen}, nil
}

// held is a request a generation admitted and holds until its release,
// which also lets go of the generation.
type held struct {
	model.Admitted
	gen  *swap.Generation[model.Model]
	once atomic.Bool
}

func (a *held) Release(done bool) {
	if a.once.CompareAndSwap(false, true) {
		a.Admitted.Release(done)
		a.gen.Leave()
	}
}

// errClosed is a change after Close: shutdown stops the knob changes first
// (Live.Close), so it is a caller's mistake.
var errClosed = errors.New("the model is closed")

// Swap builds a generation from next and makes it current; the old one
// drains and closes in the background. A build that fails changes nothing.
func (m *Model) Swap(next *knob.Set) error {
	built, err := m.build(next)
	if err != nil {
		return err
	}
	if _, err := m.gens.Swap(built); err != nil {
		return errors.Join(errClosed, built.Close(context.Background()))
	}
	return nil
}

// Close closes the current generation once its requests are answered, and
// waits for the old ones still closing, within ctx.
func (m *Model) Close(ctx context.Context) error { return m.gens.Close(ctx) }
