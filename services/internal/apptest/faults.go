package apptest

import (
	"context"
	"maps"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/orderlab/orderlab/internal/faultproxy"
	"github.com/orderlab/orderlab/internal/ledger"
	"github.com/orderlab/orderlab/internal/pgcluster"
	"github.com/orderlab/orderlab/internal/pgtest"
	"github.com/orderlab/orderlab/services/internal/app"
)

// FaultSuite checks what a service does when its database fails under load
// (docs/reference/database-failures.md), with real parts: a throwaway Postgres
// cluster of the suite's own, pg_terminate_backend, pg_ctl stop and start,
// and toxiproxy between the service and the database. Under every fault:
// no 500, every acknowledged order in the table, none stored twice, none
// stored that was answered "not stored", and afterwards the goroutines back
// to their baseline and every pooled connection alive. env sets the model's
// knobs so that it does not shed the load (a busy CI machine is slow).
func FaultSuite(t *testing.T, svc app.Service, env map[string]string) {
	cluster := pgtest.NewCluster(t)
	f := &faults{t: t, cluster: cluster, svc: svc, env: env}

	// Every backend killed at once under 100 orders/s: a call whose
	// connection breaks is retried on a new one, so no keyed order fails.
	t.Run("KillBackends", func(t *testing.T) {
		run := f.start(t, false, nil)
		load := startLoad(run.inst, "kill", "/orders?db_delay=5ms", 100)
		time.Sleep(time.Second)
		if n := run.killBackends(); n == 0 {
			t.Error("no backend to kill: the fault did not happen")
		}
		time.Sleep(2 * time.Second)
		as := load.Finish()
		checkAnswers(t, as, func(a ledger.Answer) bool {
			return a.Key == "" && a.Status == http.StatusServiceUnavailable && a.Type == "outcome-unknown"
		})
		run.check(t, as)
		if r := Value(run.inst.Metrics(), "orderlab_db_retries_total", nil); r == 0 {
			t.Error("orderlab_db_retries_total = 0 after a kill under load: no call met a dead connection")
		}
	})

	// 25 ms each way: slower, never failed.
	t.Run("Latency", func(t *testing.T) {
		run := f.start(t, true, nil)
		if err := run.proxy.Latency(25 * time.Millisecond); err != nil {
			t.Fatal(err)
		}
		load := startLoad(run.inst, "latency", "/orders", 50)
		time.Sleep(2 * time.Second)
		as := load.Finish()
		run.proxy.Clear()
		checkAnswers(t, as, func(ledger.Answer) bool { return false })
		run.check(t, as)
	})

	// Silence without a reset: requests end at their deadline (1 s here),
	// the service recovers when the network does.
	t.Run("Blackhole", func(t *testing.T) {
		run := f.start(t, true, map[string]string{"REQUEST_TIMEOUT": "1s"})
		load := startLoad(run.inst, "blackhole", "/orders", 100)
		time.Sleep(500 * time.Millisecond)
		if err := run.proxy.Blackhole(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(1500 * time.Millisecond)
		run.proxy.Clear()
		time.Sleep(1500 * time.Millisecond)
		as := load.Finish()
		checkAnswers(t, as, func(a ledger.Answer) bool {
			return a.Status == http.StatusTooManyRequests || a.Status == http.StatusServiceUnavailable && a.Type != ""
		})
		run.check(t, as)
	})

	// Every connection reset as soon as it carries data.
	t.Run("ResetPeer", func(t *testing.T) {
		run := f.start(t, true, nil)
		load := startLoad(run.inst, "reset", "/orders", 100)
		time.Sleep(500 * time.Millisecond)
		if err := run.proxy.ResetPeer(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		run.proxy.Clear()
		time.Sleep(time.Second)
		as := load.Finish()
		checkAnswers(t, as, func(a ledger.Answer) bool {
			return a.Status == http.StatusServiceUnavailable && (a.Type == "database-unavailable" || a.Type == "outcome-unknown")
		})
		run.check(t, as)
	})

	// Postgres stopped (fast) under load and started a second later: while
	// it is down, orders and /readyz answer 503 database-unavailable with a
	// Retry-After at once, not at their deadline; then it all works again.
	// Last: it stops the suite's cluster.
	t.Run("Restart", func(t *testing.T) {
		run := f.start(t, false, map[string]string{"REQUEST_TIMEOUT": "20s"})
		load := startLoad(run.inst, "restart", "/orders?db_delay=5ms", 100)
		time.Sleep(time.Second)
		ctx := context.Background()
		if err := cluster.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		for _, r := range []Response{
			run.inst.MustDo(http.MethodGet, "/readyz", "", nil, nil),
			run.inst.MustDo(http.MethodPost, "/orders", "application/json", []byte(OrderBody("while-down", 1)), nil),
		} {
			var p problem
			r.JSON(t, &p)
			if ra, err := strconv.Atoi(r.Header.Get("Retry-After")); r.Status != http.StatusServiceUnavailable ||
				p.Type != problemBase+"database-unavailable" || err != nil || ra < 1 {
				t.Errorf("with Postgres down: %d %s, Retry-After %q; want 503 database-unavailable with Retry-After",
					r.Status, r.Body, r.Header.Get("Retry-After"))
			}
		}
		time.Sleep(time.Second)
		if err := cluster.Start(ctx); err != nil {
			t.Fatal(err)
		}
		run.inst.waitReady()
		time.Sleep(time.Second)
		as := load.Finish()
		checkAnswers(t, as, func(a ledger.Answer) bool {
			return a.Status == http.StatusServiceUnavailable && (a.Type == "database-unavailable" || a.Type == "outcome-unknown")
		})
		run.check(t, as)
		if n := Value(run.inst.Metrics(), "orderlab_db_errors_total", map[string]string{"class": "unavailable"}); n == 0 {
			t.Error("no unavailable error counted while Postgres was down")
		}
	})
}

// ProxyLeaks is the goleak option for the suite's proxy: it ignores the
// goroutine toxiproxy's teardown can leave (faultproxy.LeakyPipe) and
// nothing else.
var ProxyLeaks = goleak.IgnoreTopFunction(faultproxy.LeakyPipe)

const problemBase = "https://github.com/orderlab/orderlab/blob/main/docs/reference/api.md#problem-"

type faults struct {
	t       *testing.T
	cluster *pgcluster.Cluster
	svc     app.Service
	env     map[string]string
}

// faultRun is one service on a database of its own on the suite's cluster,
// reached through proxy when it is not nil.
type faultRun struct {
	inst     *Instance
	proxy    *faultproxy.Proxy
	appName  string
	maxConns int
	baseline float64 // goroutines before the load
}

// start starts the service, through a proxy when viaProxy, with env over
// the suite's, and fills its pool: every connection open, as after the
// fault (checkRecovered), so that the goroutine baselines compare (the
// proxy runs in this process, with goroutines per connection).
func (f *faults) start(t *testing.T, viaProxy bool, env map[string]string) *faultRun {
	t.Helper()
	dbURL := pgtest.NewOn(t, f.cluster.URL)
	vars := map[string]string{"DB_MAX_CONNS": "8"}
	maps.Copy(vars, f.env)
	maps.Copy(vars, env)
	run := &faultRun{appName: "orderlab-" + f.svc.Model}
	run.maxConns, _ = strconv.Atoi(vars["DB_MAX_CONNS"])
	if viaProxy {
		u, err := url.Parse(dbURL)
		if err != nil {
			t.Fatal(err)
		}
		p, err := faultproxy.New(u.Host)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close)
		u.Host = p.Addr
		vars["DATABASE_URL"] = u.String()
		run.proxy = p
	}
	run.inst = StartOn(t, dbURL, f.svc, vars)
	useEveryConnection(t, run.inst, run.maxConns)
	run.baseline = Value(run.inst.Metrics(), "go_goroutines", nil)
	return run
}

// killBackends ends every session of the service on its database, from a
// connection of the test's, and returns how many it ended.
func (r *faultRun) killBackends() int {
	return r.inst.CountRows(`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = $1 AND datname = current_database()`, r.appName)
}

// check holds the service to its answers and checks that it recovered.
func (r *faultRun) check(t *testing.T, as []ledger.Answer) {
	t.Helper()
	if len(as) == 0 {
		t.Fatal("no answer: the load did not run")
	}
	checkStored(t, r.inst, as)
	checkRecovered(t, r.inst, r.baseline, r.maxConns, r.appName)
}
