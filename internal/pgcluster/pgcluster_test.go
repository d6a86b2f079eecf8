package pgcluster

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/orderlab/orderlab/internal/poll"
)

// A cluster of its own: it answers, a fast stop ends its sessions with
// FATAL 57P01, it refuses connections while stopped, it keeps committed data
// and the settings it was given across a restart, and Destroy leaves
// nothing behind.
func TestClusterStopStartKeepsData(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := New(ctx, "max_connections=150")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := c.Destroy(context.Background()); err != nil {
			t.Error(err)
		}
		if _, err := os.Stat(c.Dir); !os.IsNotExist(err) {
			t.Errorf("Destroy left %s behind: %v", c.Dir, err)
		}
	}()

	conn, err := pgx.Connect(ctx, c.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "CREATE TABLE t (v int); INSERT INTO t VALUES (42)"); err != nil {
		t.Fatal(err)
	}

	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "SELECT 1"); err == nil {
		t.Error("a session survived the stop")
	}
	if _, err := pgx.Connect(ctx, c.URL); err == nil {
		t.Error("a stopped cluster accepted a connection")
	}

	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	again, err := pgx.Connect(ctx, c.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close(context.Background())
	var v int
	if err := again.QueryRow(ctx, "SELECT v FROM t").Scan(&v); err != nil || v != 42 {
		t.Errorf("after the restart: %d, %v; want the committed 42", v, err)
	}
	var max string
	if err := again.QueryRow(ctx, "SHOW max_connections").Scan(&max); err != nil || max != "150" {
		t.Errorf("max_connections after the restart = %q, %v; want the 150 it was given", max, err)
	}
}

// PgBouncer gives its idle server connections back within seconds, so
// that a phase after one that went through it finds the role's connections
// free.
func TestPgBouncerClosesIdleServerConnections(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Destroy(context.Background()) })
	b, err := c.PgBouncer(ctx, "transaction", 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Stop() })
	url, err := b.URL(c.URL)
	if err != nil {
		t.Fatal(err)
	}
	// Three clients in a transaction at once: three server connections.
	var clients []*pgx.Conn
	var txs []pgx.Tx
	for range 3 {
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, "SELECT 1"); err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		clients, txs = append(clients, conn), append(txs, tx)
	}
	direct, err := pgx.Connect(ctx, c.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close(context.Background())
	servers := func() int {
		var n int
		if err := direct.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := servers(); n != 3 {
		t.Fatalf("%d server connections with three transactions open through PgBouncer, want 3", n)
	}
	// Committed, then gone: the server connections are clean and idle in
	// PgBouncer (a client that leaves inside a transaction would have its
	// server connection closed at once).
	for i, conn := range clients {
		if err := txs[i].Commit(ctx); err != nil {
			t.Fatal(err)
		}
		conn.Close(ctx)
	}
	poll.Until(t, 10*time.Second, "PgBouncer to close the idle server connections after the clients left", func() error {
		if n := servers(); n > 0 {
			return fmt.Errorf("%d server connections still open", n)
		}
		return nil
	})
}

// A setting pg_ctl would split or misread is refused before anything starts.
func TestASettingWithBlanksIsRefused(t *testing.T) {
	for _, s := range []string{"max_connections = 200", "=200", "max_connections", "search_path='a b'"} {
		if c, err := New(context.Background(), s); err == nil {
			_ = c.Destroy(context.Background())
			t.Errorf("New(%q) started a cluster", s)
		}
	}
}
