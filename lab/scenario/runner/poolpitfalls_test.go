//go:build labcheck

package runner

import (
	"math"
	"testing"

	"github.com/orderlab/orderlab/lab/scenario/result"
	"github.com/orderlab/orderlab/loadtest/report"
)

// TestPoolPitfallScenariosRunQuickly runs the scenarios of the pool
// pitfalls (docs/scenarios: connection-leak, nested-acquire, tx-across-downstream) in quick mode against the real
// services, so that they cannot rot, and checks the one thing each must
// show even at five connections and two seconds a phase.
func TestPoolPitfallScenariosRunQuickly(t *testing.T) {
	bin := buildServices(t)
	run := func(t *testing.T, name string) *result.Result { return runCatalogQuick(t, bin, name) }
	runs := func(t *testing.T, res *result.Result, phase int) map[string]report.Run {
		out := map[string]report.Run{}
		for _, r := range res.Phases[phase].Loadtest.Runs {
			out[r.Name] = r
		}
		if len(out) != 3 {
			t.Fatalf("phase %s: %d runs, want one per service", res.Phases[phase].Name, len(out))
		}
		return out
	}
	timedOut := func(r report.Run) int64 { return r.Status["503"] }
	// longWaits counts the acquires of a run that waited over 0.5 s, from
	// its last scrape of a fresh service.
	longWaits := func(r report.Run) float64 {
		var n float64
		if k := len(r.Server.Samples); k > 0 {
			for _, b := range r.Server.Samples[k-1].AcquireWait {
				if b.UpperBound == 0.5 {
					n -= b.Count
				}
				if math.IsInf(b.UpperBound, 1) {
					n += b.Count
				}
			}
		}
		return n
	}

	t.Run("connection-leak", func(t *testing.T) {
		// 50 requests/s, one in ten leaks: the pool of 5 is dry after 1 s.
		res := run(t, "connection-leak")
		for name, r := range runs(t, res, 0) {
			var peak float64
			for _, s := range r.Server.Samples {
				peak = max(peak, s.PoolAcquired)
			}
			if peak != 5 || timedOut(r) == 0 || r.Succeeded == 0 {
				t.Errorf("%s: peak acquired %v, %d ok, status %v; want the pool of 5 all acquired and 503s after successes", name, peak, r.Succeeded, r.Status)
			}
			// Postgres sees the leaked connections idle and hardly a
			// statement running (one at a time before the pool is dry,
			// none after).
			if v := viewOf(t, res, 0, name); v.PeakIdle < poolOf(t, res, 0) || 2*v.MeanActive >= v.MeanIdle {
				t.Errorf("%s: Postgres saw %s; want the pool's backends idle, far fewer active", name, v)
			}
		}
		reportSaysWhatPostgresSaw(t, res, "by state, mean")
	})
	t.Run("nested-acquire", func(t *testing.T) {
		// A deadlock shows as acquires that wait until the 1 s deadline; a
		// request can also time out in the pipeline's queue on a busy
		// machine, so 503s alone do not tell.
		// At pool 4 the semaphore deadlocks only now and then (4-10
		// requests of thousands in 10 s at full size, README 15): in a
		// 2 s phase it may not, so only unbounded must. The pipeline's
		// deadlock as it opens is a race too (its four workers must each
		// take a first connection before any takes its second): it either
		// deadlocks (then it may answer nothing but 503 in 2 s) or runs one
		// request at a time; never two, so under half the bound however
		// fast the machine.
		res := run(t, "nested-acquire")
		for name, r := range runs(t, res, 0) {
			switch name {
			case "unbounded":
				if n := longWaits(r); n == 0 || timedOut(r) == 0 {
					t.Errorf("pool-4, %s: %v acquires waited over 0.5 s, status %v; want the deadlock's", name, n, r.Status)
				}
			case "pipeline":
				n := longWaits(r)
				deadlock := n > 0 && timedOut(r) > 0
				if half := res.Phases[0].BoundRPS / 2; r.Goodput >= half || (r.Succeeded == 0 && !deadlock) {
					t.Errorf("pool-4, %s: %d ok (%.1f/s), %v acquires waited over 0.5 s, status %v; want the deadlock's, or one request at a time (under half the bound, %.0f/s)",
						name, r.Succeeded, r.Goodput, n, r.Status, half)
				}
			}
		}
		for name, r := range runs(t, res, 1) {
			if n := longWaits(r); (n > 0) != (name == "unbounded") {
				t.Errorf("pool-5-bounded-4, %s: %v acquires waited over 0.5 s, status %v; want a deadlock for unbounded only (4 permits, 4 workers, 5 connections)", name, n, r.Status)
			}
		}
		for name, r := range runs(t, res, 2) {
			if n := longWaits(r); n > 0 || r.Succeeded == 0 {
				t.Errorf("pool-5-clients-4, %s: %v acquires waited over 0.5 s, status %v; want successes and no deadlock", name, n, r.Status)
			}
			if v := viewOf(t, res, 2, name); v.PeakActive == 0 {
				t.Errorf("pool-5-clients-4, %s: Postgres saw %s; want statements running", name, v)
			}
		}
		// The deadlock, as Postgres sees it: the pool's backends idle,
		// hardly a statement running.
		if v := viewOf(t, res, 0, "unbounded"); v.PeakIdle < poolOf(t, res, 0) || v.MeanActive >= v.MeanIdle {
			t.Errorf("pool-4, unbounded: Postgres saw %s; want the pool's backends idle, fewer active", v)
		}
		reportSaysWhatPostgresSaw(t, res, "by state, mean")
	})
	t.Run("tx-across-downstream", func(t *testing.T) {
		res := run(t, "tx-across-downstream")
		inside, before := runs(t, res, 0)["unbounded"], runs(t, res, 1)["unbounded"]
		// Pool 5: 5 / 170 ms = 29/s inside, 5 / 20 ms = 250/s before, for
		// 200/s offered on at most 50 connections: inside, 50 requests in
		// flight wait 50 / 29 per s = 1.7 s for the pool, past their 1 s
		// deadline. Compared, not absolute: a loaded machine slows both.
		if timedOut(inside) <= timedOut(before) || before.Succeeded < 2*inside.Succeeded {
			t.Errorf("unbounded: inside %d ok, status %v; before %d ok, status %v; want inside to starve the pool and before to keep up",
				inside.Succeeded, inside.Status, before.Succeeded, before.Status)
		}
		// Postgres sees the transactions idle while the call runs, and
		// (almost) none once the call comes first.
		in, out := viewOf(t, res, 0, "unbounded"), viewOf(t, res, 1, "unbounded")
		if in.PeakIdleInTx == 0 || in.LongestIdleInTxSeconds == 0 || out.MeanIdleInTx >= in.MeanIdleInTx {
			t.Errorf("unbounded: Postgres saw, inside, %s; before, %s; want idle in transaction inside, less before", in, out)
		}
		reportSaysWhatPostgresSaw(t, res, "idle in transaction, peak")
	})
}
