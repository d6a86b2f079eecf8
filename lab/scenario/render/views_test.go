package render

import (
	"strings"
	"testing"

	"github.com/orderlab/orderlab/lab/scenario/observe"
	"github.com/orderlab/orderlab/lab/scenario/result"
)

// TestViewTablesSayWhatWasSeenAndWhyNothingWas: a phase's views of
// Postgres and PgBouncer are a row per target's run (a second run of a
// target numbered), in words, and a run that could not be sampled says so
// and why, in a row as wide as the head.
func TestViewTablesSayWhatWasSeenAndWhyNothingWas(t *testing.T) {
	pg := observe.PostgresView{Target: "unbounded", Samples: 3, MaxConnections: 100, RoleLimit: -1, MeanIdleInTx: 1, PeakIdleInTx: 1}
	tab := PostgresTable(result.PhaseResult{Postgres: []observe.PostgresView{pg}})
	if len(tab.Rows) != 1 || !strings.Contains(strings.Join(tab.Rows[0], "|"), "1.0 idle in transaction") {
		t.Errorf("table %v: want one row with 1.0 idle in transaction", tab)
	}
	none := observe.PostgresView{Target: "pipeline", Err: "connection refused"}
	if tab := PostgresTable(result.PhaseResult{Postgres: []observe.PostgresView{none}}); !strings.HasPrefix(tab.Rows[0][1], "no sample: ") {
		t.Errorf("row %v: want it to say no sample and why", tab.Rows[0])
	}

	pb := observe.PoolerView{Target: "semaphore", Samples: 4, Mode: "transaction", PoolSize: 2, PeakClientsWaiting: 3,
		Transactions: 3, WaitSeconds: 0.6}
	tab = PoolerTable(result.PhaseResult{PgBouncer: []observe.PoolerView{pb}})
	if row := strings.Join(tab.Rows[0], "|"); len(tab.Rows) != 1 || !strings.HasPrefix(row, "semaphore|3|") ||
		!strings.Contains(row, "(3 transactions)") || !strings.Contains(row, "default_pool_size 2 (transaction mode)") {
		t.Errorf("table %v: want one row of semaphore, 3 waiting at most, 3 transactions, the pool's size", tab)
	}
	blank := observe.PoolerView{Target: "pipeline", Err: "connection refused"}
	tab = PoolerTable(result.PhaseResult{PgBouncer: []observe.PoolerView{blank, blank}})
	for i, name := range []string{"pipeline", "pipeline #2"} {
		if row := tab.Rows[i]; row[0] != name || !strings.HasPrefix(row[1], "no sample: ") || len(row) != len(tab.Head) {
			t.Errorf("row %v: want %s, no sample and why, as wide as the head", row, name)
		}
	}
}
