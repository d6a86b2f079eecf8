//go:build labcheck

package runner

import (
	"testing"

	"github.com/orderlab/orderlab/lab/scenario/render"
	"github.com/orderlab/orderlab/lab/scenario/result"
	"github.com/orderlab/orderlab/loadtest/report"
)

// quickCatalog runs a catalog scenario in quick mode against one target
// (the database pitfalls, docs/scenarios: too-many-clients, db-latency, db-restart) and returns the
// result, each phase with that target's run.
func quickCatalog(t *testing.T, bin, name, target string) *result.Result {
	t.Helper()
	res := runCatalogQuick(t, bin, name, target)
	for _, p := range res.Phases {
		if p.Loadtest == nil || len(p.Loadtest.Runs) != 1 || p.Loadtest.Runs[0].Server == nil {
			t.Fatalf("phase %s: want one run of %s with server metrics", p.Name, target)
		}
		if n := p.Loadtest.Runs[0].Status["500"]; n > 0 {
			t.Errorf("phase %s: %d answers of 500", p.Name, n)
		}
	}
	return res
}

func runOf(p result.PhaseResult) report.Run { return p.Loadtest.Runs[0] }

// TestDatabasePitfallsQuick runs the three database pitfalls in quick mode,
// each against one model, on one build of the services.
func TestDatabasePitfallsQuick(t *testing.T) {
	bin := buildServices(t)
	t.Run("too-many-clients", func(t *testing.T) { tooManyClients(t, bin) })
	t.Run("db-latency", func(t *testing.T) { dbLatency(t, bin) })
	t.Run("db-restart", func(t *testing.T) { dbRestart(t, bin) })
}

// Too many clients: three replicas of unbounded whose pools need more than
// the role's 10 connections get 503s of class unavailable; pools sized to
// fit, and PgBouncer in transaction mode (with migrations that take no
// session lock), get none.
func tooManyClients(t *testing.T, bin string) {
	res := quickCatalog(t, bin, "too-many-clients", "unbounded")
	beyond, fitted, bounced := runOf(res.Phases[0]), runOf(res.Phases[1]), runOf(res.Phases[2])
	if beyond.Status["503"] == 0 || beyond.Server.DBErrors["unavailable"] == 0 {
		t.Errorf("pools beyond the limit: statuses %v, db errors %v; want 503s of class unavailable", beyond.Status, beyond.Server.DBErrors)
	}
	for _, r := range []report.Run{fitted, bounced} {
		if len(r.Server.DBErrors) > 0 || r.Status["503"] > 0 || r.Succeeded == 0 {
			t.Errorf("a fix: statuses %v, db errors %v; want only successes", r.Status, r.Server.DBErrors)
		}
	}
	if env := res.Phases[1].Env; env["DB_MAX_CONNS"] != "2" {
		t.Errorf("fix A ran with DB_MAX_CONNS=%s, want its own 2 (3 x (2 + 1) <= 10)", env["DB_MAX_CONNS"])
	}
	if got := bounced.Server.PoolMax; got != 15 {
		t.Errorf("through PgBouncer the replicas' pools add up to %v, want 3 x 5 (their metrics summed)", got)
	}
	// What the database owner sees: the role at its limit and refusals in
	// the server log; neither with a fix.
	if v := viewOf(t, res, 0, "unbounded"); v.RoleLimit != 10 || v.PeakBackends != v.RoleLimit || v.Refused == nil || *v.Refused == 0 {
		t.Errorf("pools beyond the limit, Postgres saw %s; want the role's 10 backends and refusals in the log", v)
	}
	for i, most := range map[int]int{1: 9, 2: 7} {
		if v := viewOf(t, res, i, "unbounded"); v.PeakBackends > most || v.Refused == nil || *v.Refused != 0 {
			t.Errorf("%s, Postgres saw %s; want at most %d backends and no refusal", res.Phases[i].Name, v, most)
		}
	}
	reportSaysWhatPostgresSaw(t, res, "refused connections (server log)", render.PoolerCaption)
	// What PgBouncer saw: fix B alone went through it, every committed
	// order a transaction of its, on at most its 7 server connections.
	for i, p := range res.Phases[:2] {
		if len(p.PgBouncer) > 0 {
			t.Errorf("phase %d (%s) went around PgBouncer, yet has a view of it: %v", i, p.Name, p.PgBouncer)
		}
	}
	if pv := res.Phases[2].PgBouncer; len(pv) != 1 || pv[0].Samples < 2 || pv[0].Missed > 0 || pv[0].PoolSize != 7 ||
		pv[0].PeakServersActive > 7 || pv[0].Transactions < bounced.Succeeded {
		t.Errorf("fix B, PgBouncer saw %v; want one view of 7 server connections at most and a transaction per order (%d)", pv, bounced.Succeeded)
	}
}

// A slower network: 20 ms more per round trip lengthens the mean hold by
// about that much and lowers pool/hold, on the same running service; the
// hold comes back when the latency goes.
func dbLatency(t *testing.T, bin string) {
	res := quickCatalog(t, bin, "db-latency", "semaphore")
	var hold [3]float64
	for i, p := range res.Phases {
		hold[i] = runOf(p).Server.MeanHoldSeconds
	}
	// The first phase's hold also carries the new process's warm-up (and,
	// on a busy machine, time waiting for a core): the latency must show
	// against the quicker of the two phases without it, and the middle must
	// stand clearly above both.
	if quick, slow := min(hold[0], hold[2]), max(hold[0], hold[2]); hold[1]-quick < 0.015 || hold[1]-slow < 0.008 {
		t.Errorf("mean hold %v s at 0, 20, 0 ms more per round trip: want about 20 ms more in the middle", hold)
	}
}

// A restart under load: while Postgres is down the keyed orders are
// answered 503 database-unavailable, orders succeed again after it is
// back (a keyed order sent after it went down succeeded: none can while it
// is down), and the table holds every acknowledged order once.
func dbRestart(t *testing.T, bin string) {
	res := quickCatalog(t, bin, "db-restart", "pipeline")
	os := res.Phases[0].Outages
	if len(os) != 1 {
		t.Fatalf("%d outages, want 1", len(os))
	}
	o := os[0]
	if o.Err != "" || o.Started <= o.Stopped || o.Answers["503 database-unavailable"] == 0 || o.Answers["500"] > 0 {
		t.Errorf("outage %+v: want a stop and a start, 503 database-unavailable while down, no 500", o)
	}
	if o.Missing+o.Duplicates+o.Stored > 0 {
		t.Errorf("the table disagrees with the answers: %d missing, %d twice, %d stored despite the answer", o.Missing, o.Duplicates, o.Stored)
	}
	if !o.Recovered {
		t.Errorf("no keyed order sent after Postgres was back succeeded (answers by second %v): want success again", o.BySecond)
	}
}
