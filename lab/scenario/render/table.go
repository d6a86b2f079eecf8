package render

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/orderlab/orderlab/lab/scenario/result"
	"github.com/orderlab/orderlab/loadtest/report"
)

// Table is a phase's figures, one row per target (or per task model).
type Table struct {
	Head []string
	Rows [][]string
	// Detail marks the columns (by index, parallel to Head) that Split moves
	// to the server-side table; nil: none.
	Detail []bool
}

// Split returns the table as two that each fit a page: the client's
// figures and the expectation, then the server's (CPU, memory, pool),
// each starting with the first column. detail is empty when no column is
// marked.
func (t Table) Split() (main, detail Table) {
	if !slices.Contains(t.Detail, true) {
		return t, Table{}
	}
	cols := func(want bool) []int {
		idx := []int{0}
		for i := 1; i < len(t.Head); i++ {
			if i < len(t.Detail) && t.Detail[i] == want {
				idx = append(idx, i)
			}
		}
		return idx
	}
	pick := func(idx []int) Table {
		var out Table
		for _, i := range idx {
			out.Head = append(out.Head, t.Head[i])
		}
		for _, r := range t.Rows {
			var row []string
			for _, i := range idx {
				row = append(row, r[i])
			}
			out.Rows = append(out.Rows, row)
		}
		return out
	}
	return pick(cols(false)), pick(cols(true))
}

// Warnings are the phase's runs' warnings (the generator's own lateness too
// large beside the latency it measured), each once per target: "target:
// warning".
func Warnings(p result.PhaseResult) []string {
	if p.Loadtest == nil {
		return nil
	}
	var out []string
	for _, r := range p.Loadtest.Runs {
		for _, w := range r.Warnings {
			if m := r.Name + ": " + w; !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
	}
	return out
}

// TableOf builds the table of phase p.
func TableOf(p result.PhaseResult) Table {
	if p.Tasks != nil {
		return tasksTable(p)
	}
	var runs []report.Run
	if p.Loadtest != nil {
		runs = p.Loadtest.Runs
	}
	var cols []httpColumn
	tab := Table{Head: []string{"service"}, Detail: []bool{false}}
	for _, c := range httpColumns {
		if c.when == nil || c.when(runs) {
			cols = append(cols, c)
			tab.Head = append(tab.Head, c.head)
			tab.Detail = append(tab.Detail, c.detail)
		}
	}
	texts := textColumns(runs)
	for _, c := range texts {
		tab.Head = append(tab.Head, c.head)
		tab.Detail = append(tab.Detail, false)
	}
	tab.Head = append(tab.Head, "expectation")
	tab.Detail = append(tab.Detail, false)
	for _, group := range result.ByTarget(runs) {
		row := []string{group[0].Name}
		for _, c := range cols {
			var vs []float64
			for _, r := range group {
				if v, ok := c.value(p, r); ok {
					vs = append(vs, v)
				}
			}
			row = append(row, spread(vs, c.format))
		}
		for _, c := range texts {
			var cells []string
			for _, r := range group {
				cells = append(cells, c.value(r))
			}
			row = append(row, strings.Join(slices.Compact(cells), " / "))
		}
		tab.Rows = append(tab.Rows, append(row, verdicts(group)))
	}
	return tab
}

// spread writes one figure, or the median of several with their range:
// "412 (398-430)"; "-" for none.
func spread(vs []float64, format func(float64) string) string {
	switch len(vs) {
	case 0:
		return "-"
	case 1:
		return format(vs[0])
	}
	m, lo, hi := result.Median(vs)
	return fmt.Sprintf("%s (%s-%s)", format(m), format(lo), format(hi))
}

// tasksTable is the table of an in-process phase: the median run, with the
// range of the times when the phase ran several times.
func tasksTable(p result.PhaseResult) Table {
	t := p.Tasks
	model := tasksModel(t)
	times, scaledTimes := make([]float64, 0, len(p.Repeats)), make([]float64, 0, len(p.Repeats))
	for _, r := range p.Repeats {
		times = append(times, r.ElapsedSeconds)
		if r.ScaledSeconds > 0 {
			scaledTimes = append(scaledTimes, r.ScaledSeconds)
		}
	}
	if len(times) == 0 { // a result written before repetitions were recorded
		times = append(times, t.ElapsedSeconds)
		if t.ScaledSeconds > 0 {
			scaledTimes = append(scaledTimes, t.ScaledSeconds)
		}
	}
	bound := "-"
	if t.BoundSeconds > 0 {
		bound = report.FormatSeconds(t.BoundSeconds)
	}
	return Table{
		Head: []string{"model", "jobs", "time", "bound", "time scaled to the full job count", "jobs/s", "peak goroutines", "peak heap"},
		Rows: [][]string{{model, strconv.Itoa(t.Jobs), spread(times, report.FormatSeconds), bound, spread(scaledTimes, report.FormatSeconds),
			strconv.FormatFloat(t.Throughput(), 'f', 0, 64), strconv.Itoa(t.PeakGoroutines), report.FormatBytes(float64(t.PeakHeapBytes))}},
	}
}

// verdicts sums up the SLO evaluations of a target's runs: when every run
// evaluated the same bounds with the same outcome, once, with each run's
// figure ("max<=300ms met (238ms / 243ms / 269ms)"); otherwise run by run,
// joined by " / ".
func verdicts(group []report.Run) string {
	first := group[0].SLO
	same := true
	for _, r := range group[1:] {
		same = same && len(r.SLO) == len(first)
		for i := 0; same && i < len(first); i++ {
			same = r.SLO[i].Bound == first[i].Bound && r.SLO[i].Met == first[i].Met
		}
	}
	if !same {
		var vs []string
		for _, r := range group {
			vs = append(vs, verdict(r.SLO))
		}
		return strings.Join(slices.Compact(vs), " / ")
	}
	merged := slices.Clone(first)
	for i := range merged {
		var actual []string
		for _, r := range group {
			actual = append(actual, r.SLO[i].Actual)
		}
		merged[i].Actual = strings.Join(slices.Compact(actual), " / ")
	}
	return verdict(merged)
}

// verdict sums up the SLO evaluations of a run.
func verdict(ev []report.Evaluation) string {
	if len(ev) == 0 {
		return ""
	}
	var parts []string
	for _, e := range ev {
		mark := "met"
		if !e.Met {
			mark = "MISSED"
		}
		parts = append(parts, fmt.Sprintf("%s %s (%s)", e.Bound, mark, e.Actual))
	}
	return strings.Join(parts, "; ")
}

// WriteMarkdown writes the table as GitHub Markdown.
func (t Table) WriteMarkdown(w io.Writer) error {
	line := func(cells []string) string {
		esc := make([]string, len(cells))
		for i, c := range cells {
			esc[i] = strings.ReplaceAll(c, "|", `\|`)
		}
		return "| " + strings.Join(esc, " | ") + " |\n"
	}
	var b strings.Builder
	b.WriteString(line(t.Head))
	sep := make([]string, len(t.Head))
	for i := range sep {
		sep[i] = "---"
		if i > 0 {
			sep[i] = "---:"
		}
	}
	b.WriteString(line(sep))
	for _, r := range t.Rows {
		b.WriteString(line(r))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
