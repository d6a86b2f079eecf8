package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/orderlab/orderlab/internal/pgtest"
)

// holdFigures is the hold time's sum and the statement time of reg.
func holdFigures(t *testing.T, reg *prometheus.Registry) (hold, statements float64) {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		switch f.GetName() {
		case "orderlab_db_pool_connection_hold_seconds": // every outcome
			for _, m := range f.GetMetric() {
				hold += m.GetHistogram().GetSampleSum()
			}
		case "orderlab_db_pool_statement_seconds_total":
			statements = f.GetMetric()[0].GetCounter().GetValue()
		}
	}
	return hold, statements
}

// A connection held for a statement spends its hold in it; one held
// across a downstream call inside its transaction, or while its holder
// waits for a second connection, holds without one: the statement time
// over the hold time tells them apart.
func TestStatementTimeAgainstHoldTime(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	url := pgtest.New(t)
	for _, tc := range []struct {
		name     string
		call     func(st *Store) error
		min, max float64 // statement time / hold time
	}{
		{"a 100 ms statement", func(st *Store) error { return st.HoldConnection(ctx, 100*time.Millisecond, 1) }, 0.8, 1},
		{"a 150 ms downstream call inside the transaction", func(st *Store) error {
			_, err := st.CreateOrder(ctx, req("downstream", 1, ""), 10*time.Millisecond, 150*time.Millisecond)
			return err
		}, 0, 0.4},
		{"a second connection taken while holding the first", func(st *Store) error {
			return st.HoldConnection(ctx, 100*time.Millisecond, 2)
		}, 0.25, 0.6}, // the first is held for the second's 100 ms without a statement of its own
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, reg := openSized(t, url, 4)
			if err := tc.call(st); err != nil {
				t.Fatal(err)
			}
			hold, statements := holdFigures(t, reg)
			if share := statements / hold; hold <= 0 || share < tc.min || share > tc.max {
				t.Errorf("statements %.3fs of %.3fs held (%.2f), want a share in [%.1f, %.1f]", statements, hold, share, tc.min, tc.max)
			}
		})
	}
}
