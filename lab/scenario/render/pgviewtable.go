package render

import (
	"fmt"
	"slices"
	"strings"

	"github.com/orderlab/orderlab/lab/scenario"
	"github.com/orderlab/orderlab/lab/scenario/observe"
	"github.com/orderlab/orderlab/lab/scenario/result"
	"github.com/orderlab/orderlab/loadtest/report"
)

// PostgresCaption heads a phase's table of PostgresViews.
var PostgresCaption = fmt.Sprintf("What Postgres saw (pg_stat_activity of the scenario's database, every %s, by the runner's own superuser connection)", observe.Every)

// PostgresTable is the server's view of phase p, one row per target's run
// (a second run of a target is numbered: "unbounded #2"); no rows when the
// runner sampled none (a run against the lab, a tasks phase).
func PostgresTable(p result.PhaseResult) Table {
	if len(p.Postgres) == 0 {
		return Table{}
	}
	refused := slices.ContainsFunc(p.Postgres, func(v observe.PostgresView) bool { return v.Refused != nil })
	t := Table{Head: []string{"service", "backends, peak", "connection limit", "by state, mean", "idle in transaction, peak",
		"longest open transaction", "longest idle", "waiting on a lock, peak"}}
	if refused {
		t.Head = append(t.Head, "refused connections (server log)")
	}
	names := runNames(len(p.Postgres), func(i int) string { return p.Postgres[i].Target })
	for i, v := range p.Postgres {
		name := names[i]
		if v.Samples == 0 {
			t.Rows = append(t.Rows, noSampleRow(name, v.Err, len(t.Head)))
			continue
		}
		limit := fmt.Sprintf("max_connections %d", v.MaxConnections)
		if v.RoleLimit >= 0 {
			limit = fmt.Sprintf("role %d; %s", v.RoleLimit, limit)
		}
		row := []string{name, fmt.Sprint(v.PeakBackends), limit,
			fmt.Sprintf("%.1f active, %.1f idle, %.1f idle in transaction", v.MeanActive, v.MeanIdle, v.MeanIdleInTx),
			fmt.Sprint(v.PeakIdleInTx), report.FormatSeconds(v.LongestTxSeconds), report.FormatSeconds(v.LongestIdleSeconds),
			fmt.Sprint(v.PeakLockWaits)}
		if refused {
			row = append(row, "")
			if v.Refused != nil {
				row[len(row)-1] = fmt.Sprint(*v.Refused)
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// postgresNotes are what a phase's server view needs said beside its
// table: samples missed (a stopped server).
func postgresNotes(p result.PhaseResult) []string {
	var out []string
	for _, v := range p.Postgres {
		if v.Samples > 0 && v.Missed > 0 {
			out = append(out, fmt.Sprintf("%s: %d of %d samples of pg_stat_activity failed (%s).",
				v.Target, v.Missed, v.Samples+v.Missed, v.Err))
		}
	}
	return out
}

// SignalLine names the server-side signal of the scenario's pitfall, as its
// page does ("" when the scenario names none).
func SignalLine(s scenario.Scenario) string {
	if s.ServerSignal == "" {
		return ""
	}
	return "What the database owner sees: " + strings.TrimSpace(s.ServerSignal) +
		" (the board's row \"Postgres server\"; the table \"What Postgres saw\" of each phase)."
}
