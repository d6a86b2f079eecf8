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

	"github.com/orderlab/orderlab/internal/dbfault"
	"github.com/orderlab/orderlab/internal/faultproxy"
	"github.com/orderlab/orderlab/internal/ledger"
	"github.com/orderlab/orderlab/internal/pgcluster"
	"github.com/orderlab/orderlab/internal/pgtest"
	"github.com/orderlab/orderlab/services/internal/api"
	"github.com/orderlab/orderlab/services/internal/app"
)

// FaultSuite checks what a service does when its database fails under load
// (docs/reference/database-failures.md): every fault of make faults' catalog
// (internal/dbfault), with real parts: a throwaway Postgres cluster of the
// suite's own, pg_terminate_backend, pg_ctl stop and start, and toxiproxy
// between the service and the database. Under every fault: no 500, every
// acknowledged order in the table, none stored twice, none stored that was
// answered "not stored", and afterwards the goroutines back to their
// baseline and every pooled connection alive. env sets the model's knobs
// so that it does not shed the load (a busy CI machine is slow).
func FaultSuite(t *testing.T, svc app.Service, env map[string]string) {
	cluster := pgtest.NewCluster(t)
	for _, f := range dbfault.Catalog {
		t.Run(f.Name, func(t *testing.T) {
			c, ok := faultCases[f.Name]
			if !ok {
				t.Fatalf("no expectations for the fault %s: add them to faultCases", f.Name)
			}
			run := startFaultRun(t, cluster, svc, f.Proxy, env, c.env)
			load := startLoad(run.inst, f.Name, c.path, 100)
			var during func()
			if c.during != nil {
				during = func() { c.during(t, run) }
			}
			tl, as, err := dbfault.Run(context.Background(), f, run.target, load, time.Second, 1500*time.Millisecond, during)
			if err != nil {
				t.Fatal(err)
			}
			checkAnswers(t, as, c.allowed)
			run.check(t, as, tl)
			if c.after != nil {
				c.after(t, run)
			}
		})
	}
}

// faultCase is what a service may answer under one fault of the catalog,
// beyond success, and what else it must do.
type faultCase struct {
	path    string            // the load's: /orders?...
	env     map[string]string // over the suite's
	allowed func(ledger.Answer) bool
	during  func(t *testing.T, r *faultRun) // while the fault holds
	after   func(t *testing.T, r *faultRun)
}

// unavailable: the 503s of a database that refused or broke the
// connection, stored or not as their type says.
func unavailable(a ledger.Answer) bool {
	return a.Status == http.StatusServiceUnavailable && (a.Type == "database-unavailable" || a.Type == "outcome-unknown")
}

var faultCases = map[string]faultCase{
	// Every backend killed at once under 100 orders/s: a call whose
	// connection breaks is retried on a new one, so no keyed order fails.
	dbfault.KillBackends.Name: {
		path: "/orders?db_delay=5ms",
		allowed: func(a ledger.Answer) bool {
			return a.Key == "" && a.Status == http.StatusServiceUnavailable && a.Type == "outcome-unknown"
		},
		after: func(t *testing.T, r *faultRun) {
			if n := r.inst.Metrics().Value("orderlab_db_retries_total", nil); n == 0 {
				t.Error("orderlab_db_retries_total = 0 after a kill under load: no call met a dead connection")
			}
		},
	},
	// Stopped and started at once: what is cut is answered 503 of a known type.
	dbfault.Restart.Name: {path: "/orders?db_delay=5ms", env: map[string]string{"REQUEST_TIMEOUT": "20s"}, allowed: unavailable},
	// Postgres down: orders and /readyz answer 503 database-unavailable
	// with a Retry-After at once, not at their deadline; then it all works
	// again.
	dbfault.Outage3s.Name: {
		path: "/orders?db_delay=5ms", env: map[string]string{"REQUEST_TIMEOUT": "20s"}, allowed: unavailable,
		during: func(t *testing.T, r *faultRun) {
			for _, resp := range []Response{
				r.inst.MustDo(http.MethodGet, "/readyz", "", nil, nil),
				r.inst.MustDo(http.MethodPost, "/orders", "application/json", []byte(OrderBody("while-down", 1)), nil),
			} {
				var p problem
				resp.JSON(t, &p)
				if ra, err := strconv.Atoi(resp.Header.Get("Retry-After")); resp.Status != http.StatusServiceUnavailable ||
					p.Type != api.ProblemBase+"database-unavailable" || err != nil || ra < 1 {
					t.Errorf("with Postgres down: %d %s, Retry-After %q; want 503 database-unavailable with Retry-After",
						resp.Status, resp.Body, resp.Header.Get("Retry-After"))
				}
			}
		},
		after: func(t *testing.T, r *faultRun) {
			if n := r.inst.Metrics().Value("orderlab_db_errors_total", map[string]string{"class": "unavailable"}); n == 0 {
				t.Error("no unavailable error counted while Postgres was down")
			}
		},
	},
	// Silence without a reset: requests end at their deadline (1 s here),
	// the service recovers when the network does.
	dbfault.Blackhole.Name: {
		path: "/orders", env: map[string]string{"REQUEST_TIMEOUT": "1s"},
		allowed: func(a ledger.Answer) bool {
			return a.Status == http.StatusTooManyRequests || a.Status == http.StatusServiceUnavailable && a.Type != ""
		},
	},
	// 25 ms each way: slower, never failed.
	dbfault.Latency50ms.Name: {path: "/orders", allowed: func(ledger.Answer) bool { return false }},
	// Every connection reset as soon as it carries data: 503s of a known
	// type, and, as under the blackhole, a semaphore that sheds (429, not
	// stored: the table checks it) while its permits are held by calls
	// retried on reset connections, which on a loaded machine can pass its
	// LIMIT_WAIT.
	dbfault.ResetPeer.Name: {path: "/orders", allowed: func(a ledger.Answer) bool {
		return a.Status == http.StatusTooManyRequests || unavailable(a)
	}},
}

// ProxyLeaks is the goleak option for the suite's proxy: it ignores the
// goroutine toxiproxy's teardown can leave (faultproxy.LeakyPipe) and
// nothing else.
var ProxyLeaks = goleak.IgnoreTopFunction(faultproxy.LeakyPipe)

// faultRun is one service on a database of its own on the suite's cluster,
// reached through the target's proxy when the fault needs one.
type faultRun struct {
	inst     *Instance
	target   dbfault.Target
	maxConns int
	baseline float64 // goroutines before the load
}

// startFaultRun starts the service, through a proxy when viaProxy, with
// env and then caseEnv over the defaults, and fills its pool: every
// connection open, as after the fault (checkRecovered), so that the
// goroutine baselines compare (the proxy runs in this process, with
// goroutines per connection).
func startFaultRun(t *testing.T, cluster *pgcluster.Cluster, svc app.Service, viaProxy bool, env, caseEnv map[string]string) *faultRun {
	t.Helper()
	dbURL := pgtest.NewOn(t, cluster.URL)
	vars := map[string]string{"DB_MAX_CONNS": "8"}
	maps.Copy(vars, env)
	maps.Copy(vars, caseEnv)
	run := &faultRun{target: dbfault.Target{Cluster: cluster, DBURL: dbURL, AppName: "orderlab-" + svc.Model}}
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
		run.target.Proxy = p
	}
	run.inst = StartOn(t, dbURL, svc, vars)
	useEveryConnection(t, run.inst, run.maxConns)
	run.baseline = run.inst.Metrics().Value("go_goroutines", nil)
	return run
}

// check holds the service to its answers (dbfault.Summarize) and checks
// that it recovered.
func (r *faultRun) check(t *testing.T, as []ledger.Answer, tl dbfault.Timeline) {
	t.Helper()
	if len(as) == 0 {
		t.Fatal("no answer: the load did not run")
	}
	s, found, err := dbfault.Summarize(context.Background(), r.inst.DB, as, tl)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range found.Missing {
		t.Errorf("acknowledged but not in the table: %s (id %d)", a, a.ID)
	}
	for _, a := range found.Duplicates {
		t.Errorf("stored more than once: %s", a)
	}
	for _, a := range found.Stored {
		t.Errorf("answered not stored, but in the table: %s", a)
	}
	t.Logf("%d answers: %s; full success again: %s", s.Sent, s.Answers, s.RecoveryText())
	r.inst.waitReady()
	checkRecovered(t, r.inst, r.baseline, r.maxConns, r.target.AppName)
}
