package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/orderlab/orderlab/internal/metrictest"
	"github.com/orderlab/orderlab/internal/pgtest"
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
