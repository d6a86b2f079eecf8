package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace/noop"
	"go.uber.org/goleak"

	"github.com/orderlab/orderlab/internal/pgtest"
	"github.com/orderlab/orderlab/internal/poll"
	"github.com/orderlab/orderlab/services/internal/dberr"
	"github.com/orderlab/orderlab/services/internal/model"
	"github.com/orderlab/orderlab/services/internal/order"
	"github.com/orderlab/orderlab/services/internal/overload"
	"github.com/orderlab/orderlab/services/internal/postgres"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// within bounds a test's wait for the pipeline (an order at the store, an
// answer): far above what it takes on a busy machine, so that running out
// means it never came.
const within = 30 * time.Second

// flakyStore is the real store, except that its first batch transactions
// fail with failure: the one thing a test cannot provoke on demand. With
// entered and hold set, it also tells each batch's size as it comes (while
// entered has room) and keeps the batch until the test closes hold: a
// worker held mid-transaction for as long as the test needs, not a
// db_delay raced against the test's own progress.
type flakyStore struct {
	*postgres.Store
	failure     error
	failBatches atomic.Int64
	entered     chan int
	hold        chan struct{}
}

func (s *flakyStore) CreateOrders(ctx context.Context, rs []order.Request, d, downstream time.Duration) ([]order.Result, error) {
	if s.entered != nil {
		select {
		case s.entered <- len(rs):
		default:
		}
	}
	if s.hold != nil {
		select {
		case <-s.hold:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if len(rs) > 1 && s.failBatches.Add(-1) >= 0 {
		return nil, s.failure
	}
	return s.Store.CreateOrders(ctx, rs, d, downstream)
}

// deadlock is how the store reports a transaction Postgres rolled back.
var deadlock = &dberr.Error{Class: dberr.Refused, Err: &pgconn.PgError{Code: "40P01", Message: "deadlock detected"}}

func openStore(t *testing.T) *postgres.Store {
	ctx := context.Background()
	st, err := postgres.Open(ctx, postgres.Config{URL: pgtest.New(t), MaxConns: 4, StartupTimeout: 10 * time.Second},
		slog.New(slog.NewTextHandler(io.Discard, nil)), prometheus.NewRegistry(), noop.NewTracerProvider())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st
}

func newPipeline(t *testing.T, cfg Config, st Store) *Pipeline {
	p, err := New(cfg, st, slog.New(slog.NewTextHandler(io.Discard, nil)), &counts{}, noop.NewTracerProvider())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return p
}

// counts are Metrics that count what the tests look at.
type counts struct {
	mu              sync.Mutex
	waits, rejected map[string]int
}

func (c *counts) Running(*Pipeline)                                     {}
func (c *counts) Committed(context.Context, string, int, time.Duration) {}
func (c *counts) Enqueued(_ context.Context, outcome string, _ time.Duration) {
	c.add(&c.waits, outcome)
}
func (c *counts) Rejected(reason string) { c.add(&c.rejected, reason) }

func (c *counts) add(m *map[string]int, k string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if *m == nil {
		*m = map[string]int{}
	}
	(*m)[k]++
}

// waits is how many admissions ended with outcome; rejections how many
// were refused for reason.
func waits(p *Pipeline, outcome string) int {
	return p.met.(*counts).get(&p.met.(*counts).waits, outcome)
}
func rejections(p *Pipeline, reason string) int {
	return p.met.(*counts).get(&p.met.(*counts).rejected, reason)
}

func (c *counts) get(m *map[string]int, k string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return (*m)[k]
}

// place admits and places an order, as a handler does.
func place(ctx context.Context, p *Pipeline, in order.Input, key string, delay time.Duration) (order.Result, error) {
	a, err := p.Admit(ctx, model.PlaceOrder)
	if err != nil {
		return order.Result{}, err
	}
	defer a.Release(true)
	return a.PlaceOrder(ctx, in, key, delay, 0)
}

// hold admits and runs a connection hold, as a handler does.
func hold(ctx context.Context, p *Pipeline, d time.Duration) error {
	a, err := p.Admit(ctx, model.HoldConnection)
	if err != nil {
		return err
	}
	defer a.Release(true)
	return a.HoldConnection(ctx, d, 1)
}

func input(i int) order.Input {
	return order.Input{CustomerID: fmt.Sprintf("c-%d", i), Items: []order.Item{{SKU: "s", Quantity: 1 + i%5, UnitPriceCents: 100}}}
}

// A failed batch is retried order by order, so every handler gets its own
// order's outcome and none is failed by its neighbours.
func TestFailedBatchIsRetriedSingly(t *testing.T) {
	st := &flakyStore{Store: openStore(t), failure: deadlock, entered: make(chan int, 1), hold: make(chan struct{})}
	st.failBatches.Store(1)
	p := newPipeline(t, Config{Workers: 1, BatchMax: 16, BatchWait: 50 * time.Millisecond, QueueCapacity: 64, PriceWorkers: 1}, st)

	const n = 8
	var wg sync.WaitGroup
	ids := make([]int64, n)
	for i := range n {
		wg.Go(func() {
			r, err := place(context.Background(), p, input(i), fmt.Sprintf("k-%d", i), 0)
			if err != nil || !r.Created {
				t.Errorf("order %d: %+v %v", i, r, err)
			}
			ids[i] = r.Order.ID
		})
	}
	holdFirstBatch(t, p, st, n)
	poll.Returns(t, within, "every order answered", wg.Wait)
	seen := map[int64]bool{}
	for _, id := range ids {
		if id <= 0 || seen[id] {
			t.Errorf("ids = %v: want %d distinct stored orders", ids, n)
			break
		}
		seen[id] = true
	}
	if st.failBatches.Load() > 0 {
		t.Fatal("the injected failure never happened: the orders were not batched")
	}
}

// A batch that may have committed (the connection broke after the batch was
// sent) is not sent again: every order gets the error, none is stored twice.
func TestUncertainBatchIsNotRetried(t *testing.T) {
	st := &flakyStore{Store: openStore(t), failure: errors.New("connection reset mid-flight"), entered: make(chan int, 1), hold: make(chan struct{})}
	st.failBatches.Store(1)
	p := newPipeline(t, Config{Workers: 1, BatchMax: 16, BatchWait: 50 * time.Millisecond, QueueCapacity: 64, PriceWorkers: 1}, st)
	const n = 4
	var wg sync.WaitGroup
	var failed atomic.Int64
	for i := range n {
		wg.Go(func() {
			if _, err := place(context.Background(), p, input(i), "", 0); err != nil {
				failed.Add(1)
			}
		})
	}
	holdFirstBatch(t, p, st, n)
	poll.Returns(t, within, "every order answered", wg.Wait)
	if failed.Load() < 2 {
		t.Errorf("%d orders failed, want the whole injected batch (>= 2) to fail", failed.Load())
	}
}

// holdFirstBatch keeps the worker's first batch at the store until each of
// the n orders is in it or queued behind it, then lets it go: the next
// batch takes all the queued ones, however slowly they came, where a
// BATCH_WAIT alone batches only the ones that come within it.
func holdFirstBatch(t *testing.T, p *Pipeline, st *flakyStore, n int) {
	t.Helper()
	first := poll.Recv(t, within, "the first batch at the store", st.entered)
	poll.Until(t, within, fmt.Sprintf("the %d orders in the first batch or queued behind it", n), func() error {
		if queued := len(p.persist); first+queued != n {
			return fmt.Errorf("%d in the first batch, %d queued", first, queued)
		}
		return nil
	})
	close(st.hold)
}

// A handler whose deadline passes after a worker claimed its order waits for
// the commit and reports it, instead of a timeout for a stored order.
func TestClaimedOrderOutlivesItsDeadline(t *testing.T) {
	st := &flakyStore{Store: openStore(t), entered: make(chan int, 1), hold: make(chan struct{})}
	p := newPipeline(t, Config{Workers: 1, BatchMax: 1, QueueCapacity: 8, PriceWorkers: 1, CommitTimeout: 5 * time.Second}, st)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type placed struct {
		r   order.Result
		err error
	}
	got := make(chan placed, 1)
	go func() {
		r, err := place(ctx, p, input(1), "", 0)
		got <- placed{r, err}
	}()
	// The worker has claimed the order and holds its transaction: the
	// handler's context ends now, before the commit, which then goes on.
	poll.Recv(t, within, "the order's batch at the store", st.entered)
	cancel()
	close(st.hold)
	if pl := poll.Recv(t, within, "the handler's answer", got); pl.err != nil || !pl.r.Created {
		t.Fatalf("PlaceOrder = %+v, %v; want the committed order", pl.r, pl.err)
	}
}

// Close drains: every order accepted before Close is committed.
func TestCloseDrainsAcceptedOrders(t *testing.T) {
	st := openStore(t)
	p := newPipeline(t, Config{Workers: 2, BatchMax: 8, BatchWait: time.Millisecond, QueueCapacity: 256, PriceWorkers: 2}, st)

	const n = 100
	var wg sync.WaitGroup
	var acked atomic.Int64
	var accepted sync.WaitGroup
	accepted.Add(n)
	for i := range n {
		wg.Go(func() {
			j := &job{ctx: context.Background(), op: model.PlaceOrder, input: input(i), delay: 5 * time.Millisecond, done: make(chan result, 1)}
			tk, err := p.admit(context.Background(), model.PlaceOrder)
			if err == nil {
				err = p.enqueue(tk, j)
			}
			accepted.Done()
			if err != nil {
				t.Errorf("admit and enqueue: %v", err)
				return
			}
			select {
			case r := <-j.done:
				if r.err == nil && r.res.Created {
					acked.Add(1)
				}
			case <-time.After(within):
				t.Errorf("order %d: no outcome in %s", i, within)
			}
		})
	}
	poll.Returns(t, within, "every order admitted and enqueued", accepted.Wait)
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	poll.Returns(t, within, "every accepted order's outcome", wg.Wait)
	if acked.Load() != n {
		t.Errorf("%d of %d accepted orders committed after Close", acked.Load(), n)
	}
	if _, err := p.Admit(context.Background(), model.PlaceOrder); !errors.Is(err, overload.ErrShuttingDown) {
		t.Errorf("Admit after Close = %v, want ErrShuttingDown", err)
	}
	// A shutdown is not a rejection: it is counted apart.
	if got := rejections(p, ReasonIntakeFull); got != 0 {
		t.Errorf("rejections after Close = %v, want 0", got)
	}
	if n := waits(p, "closed"); n != 1 {
		t.Errorf("enqueue waits with outcome=closed = %d, want 1", n)
	}
}

// With ENQUEUE_WAIT, a full queue holds the handler that long before the
// 429. In a synctest bubble (the store is blockingStore, nothing leaves the
// process): the stages fill one holder at a time, each checked once the
// bubble has settled, and ENQUEUE_WAIT passes in virtual time, exactly.
func TestEnqueueWaitThenReject(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		block := make(chan struct{})
		st := blockingStore{release: block}
		p := newPipeline(t, Config{Workers: 1, BatchMax: 1, QueueCapacity: 1, PriceWorkers: 1, EnqueueWait: 30 * time.Millisecond}, st)
		defer close(block)

		// Fill the worker, the persist slot, the price stage and the intake
		// slot, one at a time: each admitted and, but the last, off the
		// intake before the next comes (together, one could wait out
		// ENQUEUE_WAIT).
		for i := range 4 {
			go func() { _ = hold(context.Background(), p, 0) }()
			synctest.Wait()
			// A slot is free again once pricing took its job off the intake.
			admitted, slots, queued := waits(p, "enqueued"), len(p.slots), len(p.intake)
			if admitted != i+1 || (i < 3 && slots != 0) || (i == 3 && queued != 1) {
				t.Fatalf("holder %d: %d admitted, %d slots held, %d in the intake; want it admitted and, but the last, off the intake",
					i, admitted, slots, queued)
			}
		}
		start := time.Now()
		err := hold(context.Background(), p, 0)
		var rej *overload.RejectedError
		if !errors.As(err, &rej) {
			t.Fatalf("HoldConnection on a full pipeline = %v, want a rejection", err)
		}
		if waited := time.Since(start); waited != 30*time.Millisecond || rej.Waited != 30*time.Millisecond {
			t.Errorf("rejected after %s (reported %s), want ENQUEUE_WAIT=30ms", waited, rej.Waited)
		}
		if got := rejections(p, ReasonIntakeFull); got != 1 {
			t.Errorf("rejections = %v, want 1", got)
		}
	})
}

// blockingStore holds every connection until release closes.
type blockingStore struct{ release chan struct{} }

func (s blockingStore) CreateOrders(context.Context, []order.Request, time.Duration, time.Duration) ([]order.Result, error) {
	return nil, errors.New("unused")
}
func (s blockingStore) CreateOrder(context.Context, order.Request, time.Duration, time.Duration) (order.Result, error) {
	return order.Result{}, errors.New("unused")
}
func (s blockingStore) GetOrder(context.Context, int64) (order.Order, error) {
	return order.Order{}, errors.New("unused")
}
func (s blockingStore) HoldConnection(ctx context.Context, _ time.Duration, _ int) error {
	select {
	case <-s.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
