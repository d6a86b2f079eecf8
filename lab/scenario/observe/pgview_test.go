package observe

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/orderlab/orderlab/internal/pgtest"
	"github.com/orderlab/orderlab/internal/poll"
)

// TestWatchPostgresSeesIdleInTransactionAndLockWaits: a session that opened
// a transaction, locked a table and went idle, and a second one queued
// behind its lock, on a database of the test's own, are what the runner's
// view of pg_stat_activity reports, by application_name.
func TestWatchPostgresSeesIdleInTransactionAndLockWaits(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dbURL := pgtest.New(t)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	database := strings.TrimPrefix(u.Path, "/")
	connect := func(app string) *pgx.Conn {
		cfg, err := pgx.ParseConfig(dbURL)
		if err != nil {
			t.Fatal(err)
		}
		cfg.RuntimeParams["application_name"] = app
		c, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(context.Background()) })
		return c
	}
	holder, waiter := connect("orderlab-holder"), connect("orderlab-waiter")
	for _, q := range []string{"CREATE TABLE t (id int)", "BEGIN", "LOCK TABLE t IN ACCESS EXCLUSIVE MODE"} {
		if _, err := holder.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	queued := make(chan error, 1)
	go func() {
		_, err := waiter.Exec(ctx, "SELECT count(*) FROM t")
		queued <- err
	}()
	admin := connect("orderlab-test-admin")
	poll.Until(t, 10*time.Second, "the waiter queued behind the lock", func() error {
		var n int
		if err := admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = $1 AND application_name = 'orderlab-waiter' AND wait_event_type = 'Lock'`, database).Scan(&n); err != nil {
			return err
		}
		if n != 1 {
			return fmt.Errorf("%d sessions waiting on a lock", n)
		}
		return nil
	})

	w := WatchPostgres(ctx, pgtest.BaseURL(), database, "postgres", "", "unbounded", 20*time.Millisecond)
	poll.Until(t, 10*time.Second, "samples of the watch's own loop", func() error {
		if n := w.Samples(); n < 3 {
			return fmt.Errorf("%d samples", n)
		}
		return nil
	})
	v := w.Stop(ctx)

	if _, err := holder.Exec(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if err := <-queued; err != nil {
		t.Fatalf("the waiter's query: %v", err)
	}
	if v.Err != "" || v.Samples < 2 || v.Missed > 0 {
		t.Fatalf("view %+v: want two samples or more and no error", v)
	}
	// The admin session is on the same database: three client backends, one
	// of each.
	if v.PeakBackends != 3 || v.PeakByApp["orderlab-holder"] != 1 || v.PeakByApp["orderlab-waiter"] != 1 {
		t.Errorf("backends: peak %d, by application %v; want 3, one holder, one waiter", v.PeakBackends, v.PeakByApp)
	}
	if v.PeakIdleInTx != 1 || v.MeanIdleInTx != 1 || v.PeakLockWaits != 1 || v.PeakActive != 1 {
		t.Errorf("idle in transaction peak %d mean %v, lock waits %d, active %d; want 1 each",
			v.PeakIdleInTx, v.MeanIdleInTx, v.PeakLockWaits, v.PeakActive)
	}
	if v.LongestTxSeconds <= 0 || v.LongestIdleInTxSeconds <= 0 || v.LongestTxSeconds < v.LongestIdleInTxSeconds {
		t.Errorf("longest transaction %v s, idle in transaction %v s: want both above 0, the transaction the longer",
			v.LongestTxSeconds, v.LongestIdleInTxSeconds)
	}
	if v.MaxConnections <= 0 || v.RoleLimit != -1 || v.Refused != nil {
		t.Errorf("max_connections %d, role limit %d, refused %v: want the server's, none for postgres, not read",
			v.MaxConnections, v.RoleLimit, v.Refused)
	}
}

// TestWatchPostgresSaysWhyItSawNothing: a server that does not answer
// leaves the view empty with the reason, and the load is not stopped.
func TestWatchPostgresSaysWhyItSawNothing(t *testing.T) {
	ctx := context.Background()
	w := WatchPostgres(ctx, "postgres://postgres@127.0.0.1:1/postgres?sslmode=disable&connect_timeout=1", "x", "postgres", "", "pipeline", time.Second)
	v := w.Stop(ctx)
	if v.Samples != 0 || v.Err == "" {
		t.Fatalf("view %+v: want no sample and an error", v)
	}
}

// TestCountRefusedReadsTheLogFromTheRunsStart: only the refusals written
// after the offset count, in both of Postgres' wordings of SQLSTATE 53300.
func TestCountRefusedReadsTheLogFromTheRunsStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "postgres.log")
	before := `2026-12-05 08:00:00.000 UTC [10] FATAL:  too many connections for role "orderlab_app"` + "\n"
	after := before +
		`2026-12-05 08:00:01.000 UTC [11] FATAL:  sorry, too many clients already` + "\n" +
		`2026-12-05 08:00:02.000 UTC [12] LOG:  connection received: host=127.0.0.1` + "\n"
	if err := os.WriteFile(path, []byte(before+after), 0o600); err != nil {
		t.Fatal(err)
	}
	n, err := countRefused(path, int64(len(before)))
	if err != nil || n != 2 {
		t.Errorf("countRefused = %d, %v; want 2", n, err)
	}
	if _, err := countRefused(filepath.Join(t.TempDir(), "none"), 0); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing log: %v, want not exist", err)
	}
}
