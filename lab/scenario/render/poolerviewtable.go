package render

import (
	"fmt"

	"github.com/orderlab/orderlab/lab/scenario/observe"
	"github.com/orderlab/orderlab/lab/scenario/result"
	"github.com/orderlab/orderlab/loadtest/report"
)

// PoolerCaption heads a phase's table of PoolerViews.
var PoolerCaption = fmt.Sprintf("What PgBouncer saw (SHOW POOLS of the scenario's database on its admin console, every %s beside pg_stat_activity; the wait per transaction from SHOW STATS before and after)", observe.Every)

// PoolerTable is PgBouncer's view of phase p, one row per target's run
// through it, numbered as PostgresTable numbers them; no rows when no run
// of the phase went through PgBouncer.
func PoolerTable(p result.PhaseResult) Table {
	if len(p.PgBouncer) == 0 {
		return Table{}
	}
	t := Table{Head: []string{"service", "clients waiting, peak", "clients waiting, mean", "longest wait",
		"wait per transaction, mean", "clients active, peak", "server connections active / idle, peak", "server connection limit"}}
	names := runNames(len(p.PgBouncer), func(i int) string { return p.PgBouncer[i].Target })
	for i, v := range p.PgBouncer {
		name := names[i]
		if v.Samples == 0 {
			t.Rows = append(t.Rows, noSampleRow(name, v.Err, len(t.Head)))
			continue
		}
		perTx := "no transaction"
		if v.Transactions > 0 {
			perTx = fmt.Sprintf("%s (%d transactions)", report.FormatSeconds(v.MeanWaitSeconds()), v.Transactions)
		}
		t.Rows = append(t.Rows, []string{name, fmt.Sprint(v.PeakClientsWaiting), fmt.Sprintf("%.1f", v.MeanClientsWaiting),
			report.FormatSeconds(v.LongestWaitSeconds), perTx, fmt.Sprint(v.PeakClientsActive),
			fmt.Sprintf("%d / %d", v.PeakServersActive, v.PeakServersIdle),
			fmt.Sprintf("default_pool_size %d (%s mode)", v.PoolSize, v.Mode)})
	}
	return t
}

// poolerNotes are what a phase's PgBouncer view needs said beside its
// table: samples missed.
func poolerNotes(p result.PhaseResult) []string {
	var out []string
	for _, v := range p.PgBouncer {
		if v.Samples > 0 && v.Missed > 0 {
			out = append(out, fmt.Sprintf("%s: %d of %d samples of SHOW POOLS failed (%s).",
				v.Target, v.Missed, v.Samples+v.Missed, v.Err))
		}
	}
	return out
}
