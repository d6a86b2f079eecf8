package render

import (
	"fmt"
	"strings"

	"github.com/orderlab/orderlab/lab/scenario"
	"github.com/orderlab/orderlab/lab/scenario/result"
	"github.com/orderlab/orderlab/loadtest/htmlreport"
)

// view is one table of what a phase's surroundings showed (the database,
// the pooler, Go's scheduler), with its caption and what needs saying
// beside it.
type view struct {
	caption string
	table   Table
	notes   []string
}

// viewsOf are phase p's views that hold rows, in the order a reader meets
// them: Postgres, PgBouncer, then Go's scheduler when scenario s argues
// from it (SchedulerSignal).
func viewsOf(s scenario.Scenario, p result.PhaseResult) []view {
	views := []view{
		{PostgresCaption, PostgresTable(p), postgresNotes(p)},
		{PoolerCaption, PoolerTable(p), poolerNotes(p)},
	}
	if s.SchedulerSignal != "" {
		views = append(views, view{SchedulerCaption, SchedulerTable(p), nil})
	}
	var out []view
	for _, v := range views {
		if len(v.table.Rows) > 0 {
			out = append(out, v)
		}
	}
	return out
}

// writeViewsMarkdown writes phase p's views, if the run sampled any.
func writeViewsMarkdown(b *strings.Builder, s scenario.Scenario, p result.PhaseResult) error {
	for _, v := range viewsOf(s, p) {
		b.WriteString(v.caption + ":\n\n")
		if err := v.table.WriteMarkdown(b); err != nil {
			return err
		}
		b.WriteString("\n")
		for _, n := range v.notes {
			b.WriteString(n + "\n\n")
		}
	}
	return nil
}

// viewTables are phase p's views for the HTML report.
func viewTables(s scenario.Scenario, p result.PhaseResult) []htmlreport.Table {
	var out []htmlreport.Table
	for _, v := range viewsOf(s, p) {
		caption := v.caption
		if len(v.notes) > 0 {
			caption += ". " + strings.Join(v.notes, " ")
		}
		out = append(out, htmlreport.Table{Caption: caption, Head: v.table.Head, Rows: v.table.Rows})
	}
	return out
}

// runNames names n runs by their targets, target(i), a second run of a
// target numbered: "unbounded #2".
func runNames(n int, target func(i int) string) []string {
	seen := map[string]int{}
	out := make([]string, n)
	for i := range n {
		name := target(i)
		seen[name]++
		out[i] = name
		if k := seen[name]; k > 1 {
			out[i] = fmt.Sprintf("%s #%d", name, k)
		}
	}
	return out
}

// noSampleRow is a view's row of a run it could not sample, width cells
// wide, saying why.
func noSampleRow(name, why string, width int) []string {
	row := []string{name, "no sample: " + why}
	for len(row) < width {
		row = append(row, "")
	}
	return row
}

// signalLines name what the database owner and Go's scheduler show of the
// scenario's lesson, as its page does (none when it names neither).
func signalLines(s scenario.Scenario) []string {
	var out []string
	for _, l := range []string{SignalLine(s), SchedulerLine(s)} {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}
