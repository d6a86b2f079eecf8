package apptest

import (
	"bytes"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/orderlab/orderlab/internal/ledger"
	"github.com/orderlab/orderlab/internal/poll"
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
	poll.Until(t, 20*time.Second, "only live sessions in the pool", func() error {
		pooled := inst.Metrics().Value("orderlab_db_pool_total_connections", nil)
		// The sessions of this service on its database: the pool's and
		// the readiness check's own.
		live := inst.CountRows(`SELECT count(*) FROM pg_stat_activity
			WHERE application_name = $1 AND datname = current_database()`, appName)
		if float64(live) != pooled+1 {
			return fmt.Errorf("%v pooled connections, %d sessions on the server (want pooled + 1)", pooled, live)
		}
		return nil
	})
	errorsBefore := inst.Metrics().Value("orderlab_db_errors_total", nil)
	useEveryConnection(t, inst, maxConns)
	if after := inst.Metrics().Value("orderlab_db_errors_total", nil); after != errorsBefore {
		t.Errorf("database errors rose from %v to %v while every connection was used after the fault", errorsBefore, after)
	}
	poll.Until(t, 20*time.Second, "goroutines back to their baseline", func() error {
		if g := inst.Metrics().Value("go_goroutines", nil); g > baseline+5 {
			return fmt.Errorf("%v goroutines, baseline %v", g, baseline)
		}
		return nil
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
