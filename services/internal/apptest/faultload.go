package apptest

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/orderlab/orderlab/internal/ledger"
)

// startLoad sends rate orders a second to path (/orders?...) on inst, three
// in four with an Idempotency-Key (ledger.Start).
func startLoad(inst *Instance, name, path string, rate int) *ledger.Load {
	return ledger.Start(inst.URL+path, name, rate, 4)
}

// checkAnswers fails t for any answer allowed rejects, and for what no
// fault may cause: a 500, a transport error, a 503 without a known type.
func checkAnswers(t *testing.T, as []ledger.Answer, allowed func(ledger.Answer) bool) {
	t.Helper()
	bad := 0
	for _, a := range as {
		if a.Success() || allowed(a) {
			continue
		}
		if bad++; bad <= 5 {
			t.Errorf("answer not allowed under this fault: %s", a)
		}
	}
	if bad > 5 {
		t.Errorf("... %d answers not allowed in all", bad)
	}
	t.Logf("%d answers: %v", len(as), ledger.Tally(as))
}

// checkStored holds the service to its answers, against the table
// (ledger.Check): every acknowledged order there under its key, none
// stored twice, none stored that was answered "not stored".
func checkStored(t *testing.T, inst *Instance, as []ledger.Answer) {
	t.Helper()
	au, err := ledger.Check(context.Background(), inst.DB, as)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range au.Missing {
		t.Errorf("acknowledged but not in the table: %s (id %d)", a, a.ID)
	}
	for _, a := range au.Duplicates {
		t.Errorf("stored more than once: %s", a)
	}
	for _, a := range au.Stored {
		t.Errorf("answered not stored, but in the table: %s", a)
	}
}

// checkRecovered checks that the service is whole again after a fault: no
// dead connection left in its pool (every pooled connection is a live
// session on the server), every connection usable (useEveryConnection,
// without a database error), and its goroutines back to their baseline.
func checkRecovered(t *testing.T, inst *Instance, baseline float64, maxConns int, appName string) {
	t.Helper()
	if r := inst.MustDo(http.MethodGet, "/readyz", "", nil, nil); r.Status != http.StatusOK {
		t.Fatalf("/readyz after the fault = %d %s", r.Status, r.Body)
	}
	settle(t, "the pool keeps connections the server no longer has", func() (bool, string) {
		pooled := Value(inst.Metrics(), "orderlab_db_pool_total_connections", nil)
		// The sessions of this service on its database: the pool's and
		// the readiness check's own.
		live := inst.CountRows(`SELECT count(*) FROM pg_stat_activity
			WHERE application_name = $1 AND datname = current_database()`, appName)
		return float64(live) == pooled+1, fmt.Sprintf("%v pooled connections, %d sessions on the server (want pooled + 1)", pooled, live)
	})
	errorsBefore := Value(inst.Metrics(), "orderlab_db_errors_total", nil)
	useEveryConnection(t, inst, maxConns)
	if after := Value(inst.Metrics(), "orderlab_db_errors_total", nil); after != errorsBefore {
		t.Errorf("database errors rose from %v to %v while every connection was used after the fault", errorsBefore, after)
	}
	settle(t, "goroutines not back to their baseline", func() (bool, string) {
		g := Value(inst.Metrics(), "go_goroutines", nil)
		return g <= baseline+5, fmt.Sprintf("%v goroutines, baseline %v", g, baseline)
	})
}

// useEveryConnection sends n requests at once that each hold a pooled
// connection for 50 ms (n = DB_MAX_CONNS): every one must succeed.
func useEveryConnection(t *testing.T, inst *Instance, n int) {
	t.Helper()
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if r, err := inst.Do(http.MethodGet, "/work/db?delay=50ms", "", nil, nil); err != nil || r.Status != http.StatusOK {
				t.Errorf("GET /work/db = %v %d %s", err, r.Status, bytes.TrimSpace(r.Body))
			}
		})
	}
	wg.Wait()
}

// settle polls ok for up to 20 s and fails t with what with its last
// message if it never holds.
func settle(t *testing.T, what string, ok func() (bool, string)) {
	t.Helper()
	var last string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		var done bool
		if done, last = ok(); done {
			return
		}
	}
	t.Errorf("%s: %s", what, last)
}
