package scenario

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/orderlab/orderlab/internal/ledger"
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

// httpColumn is one column of an HTTP phase's table: a figure of a run and
// how to write it. A phase that ran each target several times (Runner.Count)
// shows the median of the runs and, in brackets, their range.
type httpColumn struct {
	head   string
	value  func(p PhaseResult, r report.Run) (float64, bool) // false: no figure for this run
	format func(float64) string
	when   func(runs []report.Run) bool // nil: always
	detail bool                         // in the server-side table (Table.Split)
}

func figure(f func(report.Run) float64) func(PhaseResult, report.Run) (float64, bool) {
	return func(_ PhaseResult, r report.Run) (float64, bool) { return f(r), true }
}

func successLatency(f func(*report.Latency) float64) func(PhaseResult, report.Run) (float64, bool) {
	return func(_ PhaseResult, r report.Run) (float64, bool) {
		l := r.Latency.Success
		if l == nil || l.Count == 0 {
			return 0, false
		}
		return f(l), true
	}
}

// lagFigure is a figure of the generator's own lateness (loadtest/README.md, What
// the columns mean: lag p50, lag p99, lag max).
func lagFigure(f func(*report.Latency) float64) func(PhaseResult, report.Run) (float64, bool) {
	return func(_ PhaseResult, r report.Run) (float64, bool) {
		l := r.Latency.SchedulerLag
		if l == nil || l.Count == 0 {
			return 0, false
		}
		return f(l), true
	}
}

func anyLag(runs []report.Run) bool {
	return slices.ContainsFunc(runs, func(r report.Run) bool {
		return r.Latency.SchedulerLag != nil && r.Latency.SchedulerLag.Count > 0
	})
}

// Warnings are the phase's runs' warnings (the generator's own lateness too
// large beside the latency it measured), each once per target: "target:
// warning".
func Warnings(p PhaseResult) []string {
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

func serverFigure(f func(report.Server) float64) func(PhaseResult, report.Run) (float64, bool) {
	return func(_ PhaseResult, r report.Run) (float64, bool) {
		if r.Server == nil || r.Server.Scrapes == 0 {
			return 0, false
		}
		v := f(*r.Server)
		return v, v != 0
	}
}

func decimals(n int) func(float64) string {
	return func(v float64) string { return strconv.FormatFloat(v, 'f', n, 64) }
}

func percent(v float64) string { return fmt.Sprintf("%.1f %%", v) }

func kib(v float64) string { return fmt.Sprintf("%.1f KiB", v/1024) }

var httpColumns = []httpColumn{
	{head: "time", value: figure(func(r report.Run) float64 { return r.ElapsedSeconds }), format: report.FormatSeconds},
	{head: "rps", value: figure(func(r report.Run) float64 { return r.Throughput }), format: decimals(0)},
	{head: "goodput", value: figure(func(r report.Run) float64 { return r.Goodput }), format: decimals(0)},
	{head: "of bound", value: func(p PhaseResult, r report.Run) (float64, bool) {
		return 100 * r.Goodput / p.BoundRPS, p.BoundRPS > 0
	}, format: func(v float64) string { return fmt.Sprintf("%.0f %%", v) }},
	{head: "p50", value: successLatency(func(l *report.Latency) float64 { return l.P50 }), format: report.FormatSeconds},
	{head: "p99", value: successLatency(func(l *report.Latency) float64 { return l.P99 }), format: report.FormatSeconds},
	{head: "p99.9", value: successLatency(func(l *report.Latency) float64 { return l.P999 }), format: report.FormatSeconds},
	{head: "max", value: successLatency(func(l *report.Latency) float64 { return l.Max }), format: report.FormatSeconds},
	{head: "lag p50", value: lagFigure(func(l *report.Latency) float64 { return l.P50 }), format: report.FormatSeconds, when: anyLag},
	{head: "lag p99", value: lagFigure(func(l *report.Latency) float64 { return l.P99 }), format: report.FormatSeconds, when: anyLag},
	{head: "lag max", value: lagFigure(func(l *report.Latency) float64 { return l.Max }), format: report.FormatSeconds, when: anyLag},
	{head: "ok", value: figure(func(r report.Run) float64 { return float64(r.Succeeded) }), format: decimals(0)},
	{head: "rejected", value: figure(func(r report.Run) float64 { return float64(r.Rejected) }), format: decimals(0)},
	{head: "errors", value: figure(func(r report.Run) float64 { return 100 * r.ErrorRate }), format: percent},
	{head: "attempts/ok", value: func(_ PhaseResult, r report.Run) (float64, bool) {
		return r.AttemptsPerSuccess, r.AttemptsPerSuccess > 0
	},
		format: decimals(2), when: func(runs []report.Run) bool {
			return slices.ContainsFunc(runs, func(r report.Run) bool { return r.Retries > 0 })
		}},
	{head: "server cores", detail: true, value: serverFigure(func(s report.Server) float64 { return s.Cores }), format: decimals(2)},
	{head: "CPU/answer", detail: true, value: serverFigure(func(s report.Server) float64 { return s.CPUPerAnswerUS }), format: report.FormatMicros},
	{head: "CPU/ok", detail: true, value: serverFigure(func(s report.Server) float64 { return s.CPUPerSuccessUS }), format: report.FormatMicros},
	{head: "goroutines", detail: true, value: serverFigure(func(s report.Server) float64 { return s.PeakGoroutines }), format: decimals(0)},
	{head: "threads", detail: true, value: serverFigure(func(s report.Server) float64 { return s.PeakThreads }), format: decimals(0)},
	{head: "RSS", detail: true, value: serverFigure(func(s report.Server) float64 { return s.PeakRSSBytes }), format: report.FormatBytes},
	{head: "RSS/in-flight", detail: true, value: serverFigure(RSSPerInFlight), format: kib},
	{head: "connections", detail: true, value: serverFigure(func(s report.Server) float64 { return s.PeakConnections }), format: decimals(0)},
	{head: "RSS/conn", detail: true, value: serverFigure(RSSPerConnection), format: kib},
	{head: "mean hold", detail: true, value: serverFigure(func(s report.Server) float64 { return s.MeanHoldSeconds }), format: report.FormatSeconds},
	{head: "pool/hold", detail: true, value: serverFigure(func(s report.Server) float64 {
		if s.MeanHoldSeconds <= 0 {
			return 0
		}
		return s.PoolMax / s.MeanHoldSeconds
	}), format: func(v float64) string { return fmt.Sprintf("%.0f/s", v) }},
	{head: "pool wait p99", detail: true, value: func(p PhaseResult, r report.Run) (float64, bool) {
		if r.Server == nil || r.Server.Scrapes == 0 {
			return 0, false
		}
		wait, _ := poolWaitP99(p, r)
		return wait, true
	}, format: report.FormatSeconds},
}

// TableOf builds the table of phase p.
func TableOf(p PhaseResult) Table {
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
	for _, group := range byTarget(runs) {
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

// textColumn is a column written as text: one cell per run, joined by " / ".
type textColumn struct {
	head  string
	value func(report.Run) string
}

// textColumns are the status counts, when some answer was a 5xx, and the
// database errors by class, when there were any (docs/reference/database-failures.md).
func textColumns(runs []report.Run) []textColumn {
	var cols []textColumn
	if slices.ContainsFunc(runs, func(r report.Run) bool {
		return slices.ContainsFunc(slices.Collect(maps.Keys(r.Status)), func(c string) bool { return strings.HasPrefix(c, "5") })
	}) {
		cols = append(cols, textColumn{"statuses", func(r report.Run) string {
			m := ledger.Tally{}
			for c, n := range r.Status {
				m[c] = int(n)
			}
			return m.String()
		}})
	}
	if slices.ContainsFunc(runs, func(r report.Run) bool { return r.Server != nil && len(r.Server.DBErrors) > 0 }) {
		cols = append(cols, textColumn{"db errors", func(r report.Run) string {
			if r.Server == nil || len(r.Server.DBErrors) == 0 {
				return "0"
			}
			m := ledger.Tally{}
			for c, n := range r.Server.DBErrors {
				m[c] = int(n)
			}
			return m.String()
		}})
	}
	return cols
}

// byTarget groups runs by target, in the order the targets first ran.
func byTarget(runs []report.Run) [][]report.Run {
	var groups [][]report.Run
	at := map[string]int{}
	for _, r := range runs {
		i, ok := at[r.Name]
		if !ok {
			i = len(groups)
			at[r.Name] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], r)
	}
	return groups
}

// Median returns the median of vs (the mean of the middle two for an even
// count) and their range.
func Median(vs []float64) (median, lo, hi float64) {
	s := slices.Sorted(slices.Values(vs))
	n := len(s)
	if n == 0 {
		return 0, 0, 0
	}
	median = s[n/2]
	if n%2 == 0 {
		median = (s[n/2-1] + s[n/2]) / 2
	}
	return median, s[0], s[n-1]
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
	m, lo, hi := Median(vs)
	return fmt.Sprintf("%s (%s-%s)", format(m), format(lo), format(hi))
}

// Representative returns, for each target, the run with the median
// goodput: the one a chart shows when a phase ran several times.
func Representative(runs []report.Run) []report.Run {
	var out []report.Run
	for _, group := range byTarget(runs) {
		s := slices.Clone(group)
		slices.SortStableFunc(s, func(a, b report.Run) int { return cmp.Compare(a.Goodput, b.Goodput) })
		out = append(out, s[(len(s)-1)/2])
	}
	return out
}

// tasksTable is the table of an in-process phase: the median run, with the
// range of the times when the phase ran several times.
func tasksTable(p PhaseResult) Table {
	t := p.Tasks
	model := "goroutines (one per job)"
	if t.Workers > 0 {
		model = fmt.Sprintf("pool of %d workers", t.Workers)
	}
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

// RSSPerInFlight is the growth of RSS over a run (from the scrape before
// it to the peak) divided by the peak of requests in flight in the server
// (orderlab_http_requests_in_flight, as scraped): what one request being
// served, with its connection, costs in memory. It divides by what the
// server held, not by the client's -c, which an open run may never reach.
// Locally every run starts a fresh service, so the first scrape is a clean
// baseline. It is 0 when no scrape saw a request in flight.
func RSSPerInFlight(s report.Server) float64 {
	if len(s.Samples) == 0 || s.PeakInFlight < 1 {
		return 0
	}
	return max(0, s.PeakRSSBytes-s.Samples[0].RSSBytes) / s.PeakInFlight
}

// RSSPerConnection is the growth of RSS over a run (from the scrape before
// it to the peak) divided by the peak of API connections open in the server
// (orderlab_http_connections, idle and active): what one connection, with
// whatever request it has in progress, costs in memory. In an idle run the
// baseline scrape precedes the first connection. It is 0 when no scrape saw
// a connection.
func RSSPerConnection(s report.Server) float64 {
	if len(s.Samples) == 0 || s.PeakConnections < 1 {
		return 0
	}
	return max(0, s.PeakRSSBytes-s.Samples[0].RSSBytes) / s.PeakConnections
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
