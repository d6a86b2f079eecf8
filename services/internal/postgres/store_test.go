package postgres

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/orderlab/orderlab/internal/pgtest"
	"github.com/orderlab/orderlab/services/internal/order"
)

func open(t *testing.T, url string) *Store { return openNamed(t, url, "orderlab-test") }

// openNamed opens a store whose sessions carry appName in pg_stat_activity.
func openNamed(t *testing.T, url, appName string) *Store {
	st, err := Open(context.Background(), Config{URL: url, MaxConns: 4, StartupTimeout: 10 * time.Second, ApplicationName: appName},
		slog.New(slog.NewTextHandler(io.Discard, nil)), prometheus.NewRegistry(), noop.NewTracerProvider())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st
}

func req(customer string, qty int, key string) order.Request {
	return order.NewRequest(order.Input{CustomerID: customer, Items: []order.Item{{SKU: "s", Quantity: qty, UnitPriceCents: 5}}}, key)
}

func count(t *testing.T, st *Store) int {
	var n int
	if err := st.pool().QueryRow(context.Background(), "SELECT count(*) FROM orders").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A batch is one transaction: when one order fails in the database, none of
// the batch is stored.
func TestBatchIsAtomic(t *testing.T) {
	st := open(t, pgtest.New(t))
	// Quantity 0 passes the store (validation is the edge's job) but not the
	// table's CHECK constraint.
	_, err := st.CreateOrders(context.Background(), []order.Request{req("a", 1, ""), req("b", 0, ""), req("c", 1, "")}, 5*time.Millisecond, 0)
	if err == nil {
		t.Fatal("a batch with a bad order succeeded")
	}
	if n := count(t, st); n != 0 {
		t.Fatalf("%d orders stored from a failed batch", n)
	}
	rs, err := st.CreateOrders(context.Background(), []order.Request{req("a", 1, "k"), req("a", 1, "k"), req("b", 2, "k")}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !rs[0].Created || rs[1].Created || rs[1].Order.ID != rs[0].Order.ID || rs[2].Err != order.ErrIdempotencyConflict {
		t.Errorf("one key three times in a batch: %+v", rs)
	}
	if n := count(t, st); n != 1 {
		t.Errorf("orders = %d, want 1", n)
	}
}

// Migrations run once even when several services start together.
func TestMigrateConcurrently(t *testing.T) {
	url := pgtest.New(t)
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() { open(t, url) })
	}
	wg.Wait()
	st := open(t, url)
	var n int
	if err := st.pool().QueryRow(context.Background(), "SELECT count(*) FROM schema_migrations").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("schema_migrations rows = %d, want 1", n)
	}
}

func TestGetOrderNotFound(t *testing.T) {
	st := open(t, pgtest.New(t))
	if _, err := st.GetOrder(context.Background(), 42); err != order.ErrNotFound {
		t.Errorf("GetOrder(42) = %v, want ErrNotFound", err)
	}
}

// A deadline that passes mid-query ends the query at once, is reported as
// the deadline (the request ran out of time, not the database), and the
// pool serves the next request.
func TestDeadlineMidQuery(t *testing.T) {
	st := open(t, pgtest.New(t))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := st.HoldConnection(ctx, 5*time.Second, 1)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("HoldConnection past its deadline = %v, want context.DeadlineExceeded", err)
	}
	if waited := time.Since(start); waited > 3*time.Second {
		t.Errorf("the canceled query returned after %s", waited)
	}
	if err := st.HoldConnection(context.Background(), time.Millisecond, 1); err != nil {
		t.Fatalf("the next request: %v", err)
	}
}
