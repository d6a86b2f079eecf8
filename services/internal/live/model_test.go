package live

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/orderlab/orderlab/services/internal/knob"
	"github.com/orderlab/orderlab/services/internal/model"
	"github.com/orderlab/orderlab/services/internal/order"
	"github.com/orderlab/orderlab/services/internal/overload"
)

// fakeModel records what its generation was asked.
type fakeModel struct {
	name   string
	closed chan struct{}
}

func (m *fakeModel) Admit(context.Context, model.Op) (model.Admitted, error) {
	return fakeAdmitted{m}, nil
}
func (m *fakeModel) Close(context.Context) error { close(m.closed); return nil }

type fakeAdmitted struct{ m *fakeModel }

func (fakeAdmitted) PlaceOrder(context.Context, order.Input, string, time.Duration, time.Duration) (order.Result, error) {
	return order.Result{}, nil
}
func (fakeAdmitted) GetOrder(context.Context, int64) (order.Order, error)     { return order.Order{}, nil }
func (fakeAdmitted) HoldConnection(context.Context, time.Duration, int) error { return nil }
func (fakeAdmitted) Wait() model.Wait                                         { return model.Wait{} }
func (fakeAdmitted) Release(bool)                                             {}

// A swap sends new requests to the new generation at once; the old one
// closes only once the request it admitted is released; after Close
// nothing is admitted.
func TestGenerationsSwapDrainsTheOld(t *testing.T) {
	var built []*fakeModel
	build := func(k *knob.Set) (model.Model, error) {
		m := &fakeModel{name: k.Text("LIMIT_ORDER"), closed: make(chan struct{})}
		built = append(built, m)
		return m, nil
	}
	first, err := knob.FromEnv("semaphore", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewModel(build, first, slog.New(slog.NewTextHandler(io.Discard, nil)), func() time.Duration { return 5 * time.Second })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	inFlight, _ := g.Admit(ctx, model.PlaceOrder)
	next, _, err := first.With(map[string]string{"LIMIT_ORDER": "lifo"})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Swap(next); err != nil {
		t.Fatal(err)
	}
	a, err := g.Admit(ctx, model.PlaceOrder)
	if err != nil || a.(*held).Admitted.(fakeAdmitted).m != built[1] {
		t.Fatalf("after the swap: admitted by %v (%v), want the new generation", a, err)
	}
	a.Release(true)
	select {
	case <-built[0].closed:
		t.Fatal("the old generation closed while a request it admitted was in flight")
	default:
	}
	inFlight.Release(true)
	inFlight.Release(true) // idempotent: counted out once
	<-built[0].closed
	if err := g.Close(ctx); err != nil {
		t.Fatal(err)
	}
	<-built[1].closed
	if _, err := g.Admit(ctx, model.GetOrder); !errors.Is(err, overload.ErrShuttingDown) {
		t.Errorf("Admit after Close = %v, want ErrShuttingDown", err)
	}
}
