package observe

import (
	"context"
	"fmt"
	neturl "net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/orderlab/orderlab/internal/pgtest"
	"github.com/orderlab/orderlab/internal/poll"
)

// TestWatchPoolerSeesClientsWaitInPgBouncer: behind a real PgBouncer in
// transaction mode with 2 server connections, two clients holding a
// transaction open and three more sending a query each are what the
// runner's view of SHOW POOLS reports: 2 server connections active, 3
// clients waiting, the oldest for as long as they were held up; and SHOW
// STATS counts their transactions and the time they waited.
func TestWatchPoolerSeesClientsWaitInPgBouncer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := pgtest.NewCluster(t)
	dbURL := pgtest.NewOn(t, c.URL)
	b, err := c.PgBouncer(ctx, "transaction", 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Stop() })
	url, err := b.URL(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	u, err := neturl.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	database := strings.TrimPrefix(u.Path, "/")
	connect := func() *pgx.Conn {
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close(context.Background()) })
		return conn
	}
	var held []pgx.Tx
	for range 2 {
		tx, err := connect().Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, "SELECT 1"); err != nil {
			t.Fatal(err)
		}
		held = append(held, tx)
	}
	w := WatchPooler(ctx, b.AdminURL(), database, "semaphore", 20*time.Millisecond)
	answered := make(chan error, 3)
	for range 3 {
		conn := connect()
		go func() {
			_, err := conn.Exec(ctx, "SELECT 1")
			answered <- err
		}()
	}
	poll.Until(t, 20*time.Second, "three clients waiting in PgBouncer for 200 ms", func() error {
		if v := w.Peek(); v.PeakClientsWaiting < 3 || v.LongestWaitSeconds < 0.2 {
			return fmt.Errorf("at most %d waiting, the longest %v s", v.PeakClientsWaiting, v.LongestWaitSeconds)
		}
		return nil
	})
	for _, tx := range held {
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		if err := <-answered; err != nil {
			t.Fatalf("a waiting client's query: %v", err)
		}
	}
	v := w.Stop(ctx)

	if v.Err != "" || v.Missed > 0 || v.Samples < 3 {
		t.Fatalf("view %+v: want three samples or more and no error", v)
	}
	if v.Mode != "transaction" || v.PoolSize != 2 {
		t.Errorf("pool_mode %q, default_pool_size %d; want transaction, 2", v.Mode, v.PoolSize)
	}
	if v.PeakClientsWaiting != 3 || v.PeakServersActive != 2 || v.PeakClientsActive < 2 || v.MeanClientsWaiting <= 0 {
		t.Errorf("clients waiting peak %d mean %v, active peak %d, server connections active peak %d; want 3, above 0, 2 or more, 2",
			v.PeakClientsWaiting, v.MeanClientsWaiting, v.PeakClientsActive, v.PeakServersActive)
	}
	// PgBouncer counts a transaction as it begins: the three begun after
	// the first sample (the held two began before), each of which waited
	// 200 ms or more.
	if v.Transactions != 3 || v.WaitSeconds < 0.6 {
		t.Errorf("%d transactions waited %v s; want 3, at least 0.6 s", v.Transactions, v.WaitSeconds)
	}
}

// TestWatchPoolerSaysWhyItSawNothing: a PgBouncer that does not answer
// leaves the view empty with the reason.
func TestWatchPoolerSaysWhyItSawNothing(t *testing.T) {
	ctx := context.Background()
	v := WatchPooler(ctx, "postgres://postgres@127.0.0.1:1/pgbouncer?sslmode=disable&connect_timeout=1", "x", "pipeline", time.Second).Stop(ctx)
	if v.Samples != 0 || v.Err == "" {
		t.Fatalf("view %+v: want no sample and an error", v)
	}
}
