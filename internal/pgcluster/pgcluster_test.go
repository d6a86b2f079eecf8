package pgcluster

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// A cluster of its own: it answers, a fast stop ends its sessions with
// FATAL 57P01, it refuses connections while stopped, it keeps committed data
// across a restart, and Destroy leaves nothing behind.
func TestClusterStopStartKeepsData(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := New(ctx)
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
}
