package live

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/orderlab/orderlab/internal/poll"
	"github.com/orderlab/orderlab/services/internal/knob"
	"github.com/orderlab/orderlab/services/internal/model"
	"github.com/orderlab/orderlab/services/internal/order"
	"github.com/orderlab/orderlab/services/internal/overload"
)

// fakeModel is one generation of a model: it admits every request but
// GetOrder (refused, as a limiter refuses), and says when it is closed.
type fakeModel struct {
	name   string
	closed chan struct{}
}

var errRefused = errors.New("refused")

func (m *fakeModel) Admit(_ context.Context, op model.Op) (model.Admitted, error) {
	if op == model.GetOrder {
		return nil, errRefused
	}
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

// builder builds a fakeModel per knob set, named for its LIMIT_ORDER, and
// refuses LIMIT=1 as a failed build.
type builder struct{ built []*fakeModel }

func (b *builder) build(k *knob.Set) (model.Model, error) {
	if k.Int("LIMIT") == 1 {
		return nil, errors.New("no model of LIMIT=1")
	}
	m := &fakeModel{name: k.Text("LIMIT_ORDER"), closed: make(chan struct{})}
	b.built = append(b.built, m)
	return m, nil
}

// newTestModel is a Model of the semaphore's default knobs, and a set
// with LIMIT_ORDER=lifo for a swap. Within the bubble, an old generation's
// close is bounded by 5s of the bubble's clock.
func newTestModel(t *testing.T, b *builder, changes map[string]string) (*Model, *knob.Set) {
	t.Helper()
	first, err := knob.FromEnv("semaphore", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewModel(b.build, first, slog.New(slog.NewTextHandler(io.Discard, nil)), func() time.Duration { return 5 * time.Second })
	if err != nil {
		t.Fatal(err)
	}
	next, _, err := first.With(changes)
	if err != nil {
		t.Fatal(err)
	}
	return m, next
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// A swap sends new requests to the new generation at once; the old one
// closes only once every request it admitted is released, a release
// counting once however often it is called; a refused admission holds
// nothing; after Close nothing is admitted.
func TestModelSwapDrainsTheOld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &builder{}
		m, next := newTestModel(t, b, map[string]string{"LIMIT_ORDER": "lifo"})
		ctx := context.Background()
		first, _ := m.Admit(ctx, model.PlaceOrder)
		second, _ := m.Admit(ctx, model.PlaceOrder)
		if _, err := m.Admit(ctx, model.GetOrder); !errors.Is(err, errRefused) {
			t.Fatalf("a refused admission = %v, want the model's refusal", err)
		}
		if err := m.Swap(next); err != nil {
			t.Fatal(err)
		}
		a, err := m.Admit(ctx, model.PlaceOrder)
		if err != nil || a.(*held).Admitted.(fakeAdmitted).m != b.built[1] {
			t.Fatalf("after the swap: admitted by %v (%v), want the new generation", a, err)
		}
		a.Release(true)
		first.Release(true)
		first.Release(true) // counted out once: second still holds the old one
		synctest.Wait()
		if isClosed(b.built[0].closed) {
			t.Fatal("the old generation closed while a request it admitted was in flight")
		}
		second.Release(false)
		poll.Recv(t, time.Second, "the old generation's close once its requests are released", b.built[0].closed)
		if err := m.Close(ctx); err != nil {
			t.Fatal(err)
		}
		poll.Recv(t, time.Second, "the current generation's close", b.built[1].closed)
		if _, err := m.Admit(ctx, model.PlaceOrder); !errors.Is(err, overload.ErrShuttingDown) {
			t.Errorf("Admit after Close = %v, want ErrShuttingDown", err)
		}
	})
}

// A build that fails changes nothing: the model in use keeps admitting and
// stays open. A swap after Close is refused and closes what it built.
func TestModelSwapThatFailsChangesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &builder{}
		m, bad := newTestModel(t, b, map[string]string{"LIMIT": "1"})
		if err := m.Swap(bad); err == nil {
			t.Fatal("a failed build swapped")
		}
		a, err := m.Admit(context.Background(), model.PlaceOrder)
		if err != nil || a.(*held).Admitted.(fakeAdmitted).m != b.built[0] {
			t.Fatalf("after a failed swap: admitted by %v (%v), want the first generation", a, err)
		}
		a.Release(true)
		synctest.Wait()
		if isClosed(b.built[0].closed) {
			t.Fatal("a failed swap closed the generation in use")
		}
		if err := m.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		good, _, err := bad.With(map[string]string{"LIMIT": ""})
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Swap(good); !errors.Is(err, errClosed) {
			t.Errorf("Swap after Close = %v, want errClosed", err)
		}
		poll.Recv(t, time.Second, "the close of a generation built after Close", b.built[len(b.built)-1].closed)
	})
}
