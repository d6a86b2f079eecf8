package postgres

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/orderlab/orderlab/internal/pgcluster"
	"github.com/orderlab/orderlab/internal/pgdb"
)

// Behind PgBouncer in transaction mode (docs/scenarios: too-many-clients), three
// services start together: each migrates under a transaction-level lock,
// so none waits for a lock that a session left on a server connection, no
// advisory lock outlives the migrations, and the stores work through the
// pooler with default_query_exec_mode=exec.
func TestMigrateBehindATransactionPooler(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := pgcluster.New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Destroy(context.Background()) })
	db, err := pgdb.Create(ctx, c.URL, "orderlab_pooler")
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.PgBouncer(ctx, "transaction", 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Stop() })
	url, err := b.URL(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	stores, errs := make([]*Store, 3), make([]error, 3)
	var wg sync.WaitGroup
	for i := range stores {
		wg.Go(func() {
			stores[i], errs[i] = Open(ctx, Config{URL: url, MaxConns: 4, StartupTimeout: 10 * time.Second, ApplicationName: "orderlab-test"},
				slog.New(slog.NewTextHandler(io.Discard, nil)), prometheus.NewRegistry(), noop.NewTracerProvider())
		})
	}
	wg.Wait()
	for i, st := range stores {
		if errs[i] != nil {
			t.Fatalf("service %d of 3 starting behind PgBouncer: %v", i+1, errs[i])
		}
		t.Cleanup(st.Close)
	}
	for _, st := range stores {
		if _, err := st.CreateOrder(ctx, req("pooled", 1, ""), 0, 0); err != nil {
			t.Fatalf("an order through PgBouncer: %v", err)
		}
	}
	direct, err := pgx.Connect(ctx, db.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close(context.Background())
	var locks, orders int
	if err := direct.QueryRow(ctx, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'").Scan(&locks); err != nil {
		t.Fatal(err)
	}
	if err := direct.QueryRow(ctx, "SELECT count(*) FROM orders").Scan(&orders); err != nil {
		t.Fatal(err)
	}
	if locks != 0 || orders != 3 {
		t.Errorf("%d advisory locks held after the migrations, %d orders stored; want 0 and 3", locks, orders)
	}
}
