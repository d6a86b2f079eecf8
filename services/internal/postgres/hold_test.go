package postgres

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/orderlab/orderlab/internal/metrictest"
	"github.com/orderlab/orderlab/internal/pgtest"
	"github.com/orderlab/orderlab/internal/poll"
	"github.com/orderlab/orderlab/services/internal/order"
)

// Each connection hold is counted under what became of the call that held
// it: a committed order and an order not found are ok, a call whose
// deadline passed mid-query is an error, a connection kept by LEAK_EVERY
// is leaked. Only the ok holds are the pool's productive use.
func TestHoldOutcomes(t *testing.T) {
	st, reg := openSized(t, pgtest.New(t), 4)
	ctx := context.Background()
	if _, err := st.CreateOrder(ctx, req("c", 1, ""), 60*time.Millisecond, 0); err != nil {
		t.Fatalf("CreateOrder: %v", err)
	}
	if _, err := st.GetOrder(ctx, 42); !errors.Is(err, order.ErrNotFound) {
		t.Fatalf("GetOrder(42) = %v, want ErrNotFound", err)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if err := st.HoldConnection(short, 5*time.Second, 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("HoldConnection past its deadline = %v, want context.DeadlineExceeded", err)
	}
	st.SetLeakEvery(1)
	if err := st.HoldConnection(ctx, time.Millisecond, 1); err != nil {
		t.Fatalf("HoldConnection (leaked): %v", err)
	}
	st.SetLeakEvery(0)
	if n := st.ReleaseLeaked(); n != 1 {
		t.Fatalf("ReleaseLeaked = %d, want 1", n)
	}

	fams := metrictest.Gather(t, reg)
	const name = "orderlab_db_pool_connection_hold_seconds"
	for _, c := range []struct {
		outcome string
		count   uint64
		least   float64 // seconds held in all, at least
	}{
		{holdOK, 2, 0.06},    // the order's 60 ms transaction, and the read
		{holdError, 1, 0.09}, // held until the 100 ms deadline ended the query
		{holdLeaked, 1, 0},
	} {
		sum, count := fams.Sample(name, map[string]string{"outcome": c.outcome})
		if count != c.count || sum < c.least {
			t.Errorf("%s{outcome=%q}: %d holds, %.3f s in all; want %d, at least %.3f s", name, c.outcome, count, sum, c.count, c.least)
		}
	}
}

// A nested acquire whose caller gives up while it waits for its second
// connection (a canceled context, not a database error) held its first
// connection for nothing: that hold is an error, not productive use.
func TestAHoldGivenUpOnIsNotOK(t *testing.T) {
	st, reg := openSized(t, pgtest.New(t), 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- st.HoldConnection(ctx, time.Millisecond, 2) }()
	poll.Until(t, 10*time.Second, "the second acquire to wait on a pool of 1", func() error {
		f := metrictest.Gather(t, reg)
		held, waiting := f.Value("orderlab_db_pool_acquired_connections", nil), f.Value("orderlab_db_pool_acquires_in_progress", nil)
		if held < 1 || waiting < 1 {
			return fmt.Errorf("%v connections acquired, %v acquires in progress", held, waiting)
		}
		return nil
	})
	cancel()
	if err := poll.Recv(t, 10*time.Second, "the nested hold to return", done); !errors.Is(err, context.Canceled) {
		t.Fatalf("HoldConnection, canceled while it waits = %v, want context.Canceled", err)
	}
	fams := metrictest.Gather(t, reg)
	const name = "orderlab_db_pool_connection_hold_seconds"
	if _, n := fams.Sample(name, map[string]string{"outcome": holdOK}); n != 0 {
		t.Errorf("%s{outcome=ok}: %d holds; want none", name, n)
	}
	if _, n := fams.Sample(name, map[string]string{"outcome": holdError}); n != 1 {
		t.Errorf("%s{outcome=error}: %d holds; want the first connection's", name, n)
	}
}
