package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/orderlab/orderlab/loadtest/attack"
)

// column is one column of the summary table.
type column struct {
	head string
	cell func(Run) string
	when func(runs []Run) bool // nil: always
}

func lat(get func(Latencies) *Latency, q string) func(Run) string {
	return func(r Run) string {
		l := get(r.Latency)
		if l == nil || l.Count == 0 {
			return "-"
		}
		d, _ := l.Quantile(q)
		return FormatSeconds(d.Seconds())
	}
}

func success(l Latencies) *Latency     { return l.Success }
func uncorrected(l Latencies) *Latency { return l.SuccessUncorrected }

func count(f func(Run) int64) func(Run) string {
	return func(r Run) string { return strconv.FormatInt(f(r), 10) }
}

func server(f func(*Server) string) func(Run) string {
	return func(r Run) string {
		if r.Server == nil || r.Server.Scrapes == 0 {
			return "-"
		}
		return f(r.Server)
	}
}

func anyOpen(runs []Run) bool {
	return slices.ContainsFunc(runs, func(r Run) bool { return r.Settings.Mode == "open" })
}

func anyRetries(runs []Run) bool {
	return slices.ContainsFunc(runs, func(r Run) bool { return r.Retries > 0 })
}

// anyRetryPolicy: some run retried, or resent 429s under a policy that
// may have resent none (a budget that bound from the start).
func anyRetryPolicy(runs []Run) bool {
	return anyRetries(runs) || slices.ContainsFunc(runs, func(r Run) bool {
		return r.Settings.Retry != "" && r.Settings.Retry != string(attack.RetryNone)
	})
}

func ratio(v float64) string {
	if v == 0 {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func anyServer(runs []Run) bool {
	return slices.ContainsFunc(runs, func(r Run) bool { return r.Server != nil && r.Server.Scrapes > 0 })
}

// summaryColumns are the columns of the one-row-per-target table; README.md
// explains each.
var summaryColumns = []column{
	{head: "target", cell: func(r Run) string { return r.Name }},
	{head: "time", cell: func(r Run) string { return FormatSeconds(r.ElapsedSeconds) }},
	{head: "sent", cell: count(func(r Run) int64 { return r.Sent })},
	{head: "rps", cell: func(r Run) string { return strconv.FormatFloat(r.Throughput, 'f', 1, 64) }},
	{head: "goodput", cell: func(r Run) string { return strconv.FormatFloat(r.Goodput, 'f', 1, 64) }},
	{head: "ok", cell: count(func(r Run) int64 { return r.Succeeded })},
	{head: "attempts/ok", cell: func(r Run) string { return ratio(r.AttemptsPerSuccess) }, when: anyRetries},
	{head: "amplification", cell: func(r Run) string { return ratio(r.Amplification) }, when: anyRetryPolicy},
	{head: "rejected", cell: count(func(r Run) int64 { return r.Rejected })},
	{head: "errors", cell: func(r Run) string { return FormatPercent(r.ErrorRate) }},
	{head: "p50", cell: lat(success, "p50")},
	{head: "p90", cell: lat(success, "p90")},
	{head: "p99", cell: lat(success, "p99")},
	{head: "p99.9", cell: lat(success, "p99.9")},
	{head: "p99.99", cell: lat(success, "p99.99")},
	{head: "max", cell: lat(success, "max")},
	{head: "lag p50", cell: lagOf("p50"), when: anyLag},
	{head: "lag p99", cell: lagOf("p99"), when: anyLag},
	{head: "lag max", cell: lagOf("max"), when: anyLag},
	{head: "p99 uncorr.", cell: lat(uncorrected, "p99"), when: anyOpen},
	{head: "late", cell: count(func(r Run) int64 { return r.Late }), when: anyOpen},
	{head: "unsent", cell: count(func(r Run) int64 { return r.Unsent }), when: anyOpen},
	{head: "goroutines", cell: server(func(s *Server) string { return strconv.FormatFloat(s.PeakGoroutines, 'f', 0, 64) }), when: anyServer},
	{head: "threads", cell: server(func(s *Server) string { return strconv.FormatFloat(s.PeakThreads, 'f', 0, 64) }), when: anyServer},
	{head: "rss", cell: server(func(s *Server) string { return FormatBytes(s.PeakRSSBytes) }), when: anyServer},
	{head: "pool wait p99", cell: server(func(s *Server) string { return FormatSeconds(s.AcquireWaitP99) }), when: anyServer},
	{head: "cores", cell: server(func(s *Server) string { return ratio(s.Cores) }), when: anyServer},
	{head: "cpu/answer", cell: server(func(s *Server) string { return FormatMicros(s.CPUPerAnswerUS) }), when: anyServer},
	{head: "cpu/ok", cell: server(func(s *Server) string { return FormatMicros(s.CPUPerSuccessUS) }), when: anyServer},
	{head: "server rej.", cell: server(func(s *Server) string { return strconv.FormatFloat(s.Rejections, 'f', 0, 64) }), when: anyServer},
}

// Table returns the summary table of runs: its header and one row per run,
// as WriteSummary and WriteMarkdown write it.
func Table(runs []Run) (head []string, rows [][]string) {
	var cols []column
	for _, c := range summaryColumns {
		if c.when == nil || c.when(runs) {
			cols = append(cols, c)
		}
	}
	for _, c := range cols {
		head = append(head, c.head)
	}
	for _, r := range runs {
		row := make([]string, len(cols))
		for i, c := range cols {
			row[i] = c.cell(r)
		}
		rows = append(rows, row)
	}
	return head, rows
}

// WriteSummary writes one aligned row per run.
func WriteSummary(w io.Writer, runs []Run) error {
	head, rows := Table(runs)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, row := range rows {
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return writeWarnings(w, runs, "")
}

// WriteMarkdown writes the summary as a Markdown table.
func WriteMarkdown(w io.Writer, runs []Run) error {
	head, rows := Table(runs)
	align := make([]string, len(head))
	for i := range align {
		align[i] = "---:"
	}
	align[0] = "---"
	lines := []string{"| " + strings.Join(head, " | ") + " |", "|" + strings.Join(align, "|") + "|"}
	for _, row := range rows {
		lines = append(lines, "| "+strings.Join(row, " | ")+" |")
	}
	if _, err := fmt.Fprintln(w, strings.Join(lines, "\n")); err != nil {
		return err
	}
	return writeWarnings(w, runs, "\n")
}

// Warnings returns each run's warnings, prefixed with its name.
func Warnings(runs []Run) []string {
	var ws []string
	for _, r := range runs {
		for _, m := range r.Warnings {
			ws = append(ws, r.Name+": "+m)
		}
	}
	return ws
}

// writeWarnings writes the runs' warnings under a table, one a line, the
// first after sep.
func writeWarnings(w io.Writer, runs []Run, sep string) error {
	for i, m := range Warnings(runs) {
		if i == 0 && sep != "" {
			if _, err := io.WriteString(w, sep); err != nil {
				return err
			}
		}
		if _, err := fmt.Fprintf(w, "warning: %s\n", m); err != nil {
			return err
		}
	}
	return nil
}
