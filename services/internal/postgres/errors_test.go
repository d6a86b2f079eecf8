package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	neturl "net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/orderlab/orderlab/internal/faultproxy"
	"github.com/orderlab/orderlab/internal/pgtest"
	"github.com/orderlab/orderlab/services/internal/dberr"
)

// notSent is an error pgconn reports as written before anything was sent.
type notSent struct{}

func (notSent) Error() string     { return "write failed before sending" }
func (notSent) SafeToRetry() bool { return true }

// The rules of classify, one case each (docs/reference/database-failures.md).
func TestClassify(t *testing.T) {
	terminated := &pgconn.PgError{Severity: "FATAL", Code: "57P01", Message: "terminating connection due to administrator command"}
	crashed := &pgconn.PgError{Severity: "FATAL", Code: "57P02", Message: "terminating connection because of crash of another server process"}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	live := context.Background()
	for _, tc := range []struct {
		name   string
		ctx    context.Context
		err    error
		at     phase
		broken bool
		want   dberr.Class
	}{
		{"connect refused", live, errors.New("dial tcp: connection refused"), connecting, true, dberr.Unavailable},
		{"deadline while running", done, errors.New("timeout"), running, true, dberr.Deadline},
		{"nothing written", live, fmt.Errorf("write: %w", notSent{}), running, true, dberr.ConnectionLost},
		{"broken while preparing", live, pgx.ErrPreprocessingBatch{}, running, true, dberr.ConnectionLost},
		{"terminated before the last result", live, terminated, running, true, dberr.ConnectionLost},
		{"terminated after the last result", live, terminated, committing, true, dberr.OutcomeUnknown},
		{"crash shutdown before the last result", live, crashed, running, true, dberr.OutcomeUnknown},
		{"server shutting down", live, &pgconn.PgError{Severity: "FATAL", Code: "57P03"}, running, true, dberr.Unavailable},
		{"too many clients", live, &pgconn.PgError{Severity: "FATAL", Code: "53300"}, running, true, dberr.Unavailable},
		{"reset after sending", live, io.ErrUnexpectedEOF, running, true, dberr.OutcomeUnknown},
		{"check constraint", live, &pgconn.PgError{Severity: "ERROR", Code: "23514"}, running, false, dberr.Conflict},
		{"deadlock", live, &pgconn.PgError{Severity: "ERROR", Code: "40P01"}, running, false, dberr.Refused},
		{"a scan into the wrong type", live, errors.New("cannot scan"), running, false, dberr.Other},
	} {
		if got := classify(tc.ctx, tc.err, tc.at, tc.broken); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

// killBackends ends every session of the store's pool and health
// connection from another connection, as an operator or a failover does.
func killBackends(t *testing.T, url, appName string) int {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(),
		"SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1", appName).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// When every backend is killed, the next calls meet dead connections:
// each is retried once on a live one, so none fails, and the sweep leaves
// no dead connection in the pool.
func TestKilledBackendsAreRetried(t *testing.T) {
	url := pgtest.New(t)
	appName := fmt.Sprintf("orderlab-test-%d", time.Now().UnixNano())
	st := openNamed(t, url, appName)
	ctx := context.Background()
	// Four connections in the pool, all idle.
	errs := make(chan error, 4)
	for range 4 {
		go func() { errs <- st.HoldConnection(ctx, 20*time.Millisecond, 1) }()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := killBackends(t, url, appName); n < 4 {
		t.Fatalf("killed %d backends, want the pool's 4 and more", n)
	}

	if r, err := st.CreateOrder(ctx, req("unkeyed", 1, ""), 0, 0); err != nil || !r.Created {
		t.Fatalf("CreateOrder after the kill = %+v, %v; want it created on a live connection", r, err)
	}
	if r, err := st.CreateOrder(ctx, req("keyed", 1, "kill-1"), 0, 0); err != nil || !r.Created {
		t.Fatalf("keyed CreateOrder after the kill = %+v, %v", r, err)
	}
	if c := testutil.ToFloat64(st.m.errors.WithLabelValues("connection_lost")); c < 1 {
		t.Errorf("connection_lost errors = %v, want the first call's", c)
	}
	if r := testutil.ToFloat64(st.m.retries.WithLabelValues("connection_lost")); r < 1 {
		t.Errorf("connection_lost retries = %v, want >= 1", r)
	}
	if n := count(t, st); n != 2 {
		t.Errorf("orders = %d, want 2", n)
	}

	// The sweep that the first failure started has dropped the dead idle
	// connections: every connection left answers.
	st.sweeper.close()
	before := testutil.ToFloat64(st.m.errors.WithLabelValues("connection_lost"))
	for _, c := range st.pool().AcquireAllIdle(ctx) {
		if err := c.Ping(ctx); err != nil {
			t.Errorf("a dead connection is still in the pool: %v", err)
		}
		c.Release()
	}
	if after := testutil.ToFloat64(st.m.errors.WithLabelValues("connection_lost")); after != before {
		t.Errorf("connection_lost errors rose from %v to %v after the sweep", before, after)
	}
}

// With the database gone, calls fail as Unavailable, at once: a refused
// connect is not waited on until the deadline, and nothing was sent.
func TestUnreachableIsUnavailable(t *testing.T) {
	url := pgtest.New(t)
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	proxy, err := faultproxy.New(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = proxy.Addr
	st := open(t, u.String())
	proxy.Close() // nothing listens there any more
	st.pool().Reset()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = st.CreateOrder(ctx, req("down", 1, "down-1"), 0, 0)
	if c, ok := dberr.ClassOf(err); !ok || c != dberr.Unavailable || ctx.Err() != nil {
		t.Errorf("CreateOrder with the database gone = %v, want Unavailable before the deadline", err)
	}
	if err := st.Ping(ctx); err == nil {
		t.Error("Ping with the database gone succeeded")
	} else if c, _ := dberr.ClassOf(err); c != dberr.Unavailable {
		t.Errorf("Ping = %v, want Unavailable", err)
	}
	if r := testutil.ToFloat64(st.m.retries.WithLabelValues("connection_lost")) +
		testutil.ToFloat64(st.m.retries.WithLabelValues("outcome_unknown")); r != 0 {
		t.Errorf("%v retries of a call to an unreachable database, want none", r)
	}
	if n := testutil.ToFloat64(st.m.tooManyClients); n != 0 {
		t.Errorf("%v calls counted as too many clients with the database gone, want none", n)
	}
}
