package postgres

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/orderlab/orderlab/internal/pgtest"
	"github.com/orderlab/orderlab/internal/poll"
)

// openSized opens a store of maxConns connections whose pool metrics are
// registered on the returned registry.
func openSized(t *testing.T, url string, maxConns int32) (*Store, *prometheus.Registry) {
	reg := prometheus.NewRegistry()
	st, err := Open(context.Background(), Config{URL: url, MaxConns: maxConns, StartupTimeout: 10 * time.Second, ApplicationName: "orderlab-test"},
		slog.New(slog.NewTextHandler(io.Discard, nil)), reg, noop.NewTracerProvider())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st, reg
}

// poolFigures gathers the orderlab_db_pool_ figures of reg by name.
func poolFigures(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	fams, err := reg.Gather()
	if err != nil {
		t.Error(err)
		return nil
	}
	out := map[string]float64{}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			if len(m.GetLabel()) > 0 {
				continue
			}
			switch {
			case m.GetCounter() != nil:
				out[f.GetName()] = m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				out[f.GetName()] = m.GetGauge().GetValue()
			}
		}
	}
	return out
}

var poolCounterNames = []string{
	"orderlab_db_pool_acquires_total", "orderlab_db_pool_empty_acquires_total", "orderlab_db_pool_canceled_acquires_total",
	"orderlab_db_pool_acquire_duration_seconds_total", "orderlab_db_pool_empty_acquire_wait_seconds_total",
}

// backends counts the sessions connected to url's database, other than
// the one asking.
func backends(t *testing.T, conn *pgx.Conn) int {
	var n int
	if err := conn.QueryRow(context.Background(),
		"SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// waitClosed waits until every pool a resize replaced has closed.
func waitClosed(t *testing.T, st *Store) {
	t.Helper()
	poll.Until(t, 10*time.Second, "every replaced pool closed", func() error {
		var n int
		st.pools.gens.Read(func(_ *sizedPool, closing []*sizedPool) { n = len(closing) })
		if n > 0 {
			return fmt.Errorf("%d replaced pools still open", n)
		}
		return nil
	})
}

// Under concurrent orders the pool goes 20 -> 5 -> 20: no call fails, the
// size limit follows at once, the counters never go back, and afterwards
// the old pools are closed and Postgres sees only the new pool's
// connections (and the health connection).
func TestSetPoolSizeUnderLoad(t *testing.T) {
	url := pgtest.New(t)
	st, reg := openSized(t, url, 20)
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var done, failed atomic.Int64
	for w := range 30 {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				_, err := st.CreateOrder(context.Background(), req("c", 1, fmt.Sprintf("k-%d-%d", w, i)), 2*time.Millisecond, 0)
				if err != nil {
					failed.Add(1)
					t.Errorf("order during a resize: %v", err)
				}
				done.Add(1)
			}
		})
	}
	// Scrape all along: no counter may ever go back.
	scraped := make(chan struct{})
	go func() {
		defer close(scraped)
		last := map[string]float64{}
		for ctx.Err() == nil {
			f := poolFigures(t, reg)
			for _, n := range poolCounterNames {
				if f[n] < last[n] {
					t.Errorf("%s went back from %v to %v", n, last[n], f[n])
				}
				last[n] = f[n]
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	for _, size := range []int{5, 20} {
		time.Sleep(300 * time.Millisecond)
		before := done.Load()
		if err := st.SetPoolSize(context.Background(), size, 0); err != nil {
			t.Fatal(err)
		}
		if m, _ := st.PoolSize(); m != size {
			t.Errorf("PoolSize = %d after SetPoolSize(%d)", m, size)
		}
		if got := poolFigures(t, reg)["orderlab_db_pool_max_connections"]; got != float64(size) {
			t.Errorf("max_connections = %v after SetPoolSize(%d)", got, size)
		}
		poll.Until(t, 10*time.Second, fmt.Sprintf("50 orders after SetPoolSize(%d)", size), func() error {
			if done.Load() < before+50 {
				return fmt.Errorf("orders stalled after SetPoolSize(%d): %d done", size, done.Load()-before)
			}
			return nil
		})
	}
	time.Sleep(200 * time.Millisecond)
	stop()
	wg.Wait()
	<-scraped
	if failed.Load() != 0 || done.Load() == 0 {
		t.Fatalf("%d of %d orders failed", failed.Load(), done.Load())
	}
	waitClosed(t, st)
	if n := count(t, st); int64(n) != done.Load() {
		t.Errorf("%d orders stored, %d placed", n, done.Load())
	}
	f := poolFigures(t, reg)
	if f["orderlab_db_pool_acquires_total"] < float64(done.Load()) {
		t.Errorf("acquires_total = %v, below the %d orders placed", f["orderlab_db_pool_acquires_total"], done.Load())
	}
	if f["orderlab_db_pool_acquired_connections"] != 0 || f["orderlab_db_pool_total_connections"] > 20 {
		t.Errorf("after the load: %v acquired, %v total, want 0 and at most 20",
			f["orderlab_db_pool_acquired_connections"], f["orderlab_db_pool_total_connections"])
	}
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	// The old pools' connections are gone: what is left is the current
	// pool's and the health connection.
	want := int(st.pool().Stat().TotalConns()) + 1
	poll.Until(t, 5*time.Second, "Postgres back to the pool's sessions and the health connection", func() error {
		if backends(t, conn) != want {
			return fmt.Errorf("Postgres sees %d sessions, want %d (the pool's and the health connection)", backends(t, conn), want)
		}
		return nil
	})
}

// A bad size is refused and changes nothing; an unchanged size keeps the
// pool.
func TestSetPoolSizeValidates(t *testing.T) {
	st, _ := openSized(t, pgtest.New(t), 4)
	p := st.pool()
	for _, sz := range [][2]int{{0, 0}, {-1, 0}, {4, -1}, {4, 5}} {
		if err := st.SetPoolSize(context.Background(), sz[0], sz[1]); err == nil {
			t.Errorf("SetPoolSize(%d, %d) accepted", sz[0], sz[1])
		}
	}
	if err := st.SetPoolSize(context.Background(), 4, 0); err != nil {
		t.Fatal(err)
	}
	if st.pool() != p {
		t.Error("an unchanged size replaced the pool")
	}
	if m, n := st.PoolSize(); m != 4 || n != 0 {
		t.Errorf("PoolSize = %d, %d, want 4, 0", m, n)
	}
	if err := st.SetPoolSize(context.Background(), 3, 2); err != nil {
		t.Fatal(err)
	}
	if m, n := st.PoolSize(); m != 3 || n != 2 {
		t.Errorf("PoolSize = %d, %d, want 3, 2", m, n)
	}
}

// Leaked connections are handed back by ReleaseLeaked, and by a resize for
// the old pool's, so that the old pool can close.
func TestLeakLiveAndReleased(t *testing.T) {
	st, reg := openSized(t, pgtest.New(t), 4)
	st.SetLeakEvery(1)
	for range 3 {
		if _, err := st.GetOrder(context.Background(), 1); err == nil {
			t.Fatal("GetOrder(1) found an order in an empty database")
		}
	}
	if got := poolFigures(t, reg)["orderlab_db_pool_acquired_connections"]; got != 3 {
		t.Errorf("acquired = %v with three leaked, want 3", got)
	}
	if n := st.ReleaseLeaked(); n != 3 {
		t.Errorf("ReleaseLeaked = %d, want 3", n)
	}
	if got := poolFigures(t, reg)["orderlab_db_pool_acquired_connections"]; got != 0 {
		t.Errorf("acquired = %v after ReleaseLeaked, want 0", got)
	}
	_, _ = st.GetOrder(context.Background(), 1) // leaks one more
	if err := st.SetPoolSize(context.Background(), 2, 0); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, st)
	if n := st.ReleaseLeaked(); n != 0 {
		t.Errorf("ReleaseLeaked after a resize = %d, want 0 (the old pool's went with it)", n)
	}
	st.SetLeakEvery(0)
	for range 5 {
		_, _ = st.GetOrder(context.Background(), 1)
	}
	if n := st.ReleaseLeaked(); n != 0 {
		t.Errorf("LEAK_EVERY=0 leaked %d", n)
	}
}
