package scenario

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/orderlab/orderlab/loadtest/report"
)

// Table is a phase's figures, one row per target (or per task model).
type Table struct {
	Head []string
	Rows [][]string
}

// httpHead are the columns of an HTTP phase.
var httpHead = []string{"service", "time", "rps", "of bound", "p50", "p99", "p99.9", "max",
	"ok", "rejected", "errors", "goroutines", "threads", "RSS", "RSS/in-flight", "pool wait p99", "expectation"}

// TableOf builds the table of phase p.
func TableOf(p PhaseResult) Table {
	if p.Tasks != nil {
		t := p.Tasks
		model := "goroutines (one per job)"
		if t.Workers > 0 {
			model = fmt.Sprintf("pool of %d workers", t.Workers)
		}
		scaled, bound := "-", "-"
		if t.ScaledSeconds > 0 {
			scaled = report.FormatSeconds(t.ScaledSeconds)
		}
		if t.BoundSeconds > 0 {
			bound = report.FormatSeconds(t.BoundSeconds)
		}
		return Table{
			Head: []string{"model", "jobs", "time", "bound", "time scaled to the full job count", "jobs/s", "peak goroutines", "peak heap"},
			Rows: [][]string{{model, strconv.Itoa(t.Jobs), report.FormatSeconds(t.ElapsedSeconds), bound, scaled,
				strconv.FormatFloat(t.Throughput(), 'f', 0, 64), strconv.Itoa(t.PeakGoroutines), report.FormatBytes(float64(t.PeakHeapBytes))}},
		}
	}
	tab := Table{Head: httpHead}
	if p.Loadtest == nil {
		return tab
	}
	for _, r := range p.Loadtest.Runs {
		l := r.Latency.Success
		q := func(f func(*report.Latency) float64) string {
			if l == nil || l.Count == 0 {
				return "-"
			}
			return report.FormatSeconds(f(l))
		}
		ofBound := "-"
		if p.BoundRPS > 0 {
			ofBound = fmt.Sprintf("%.0f %%", 100*float64(r.Succeeded)/r.ElapsedSeconds/p.BoundRPS)
		}
		row := []string{r.Name, report.FormatSeconds(r.ElapsedSeconds), strconv.FormatFloat(r.Throughput, 'f', 0, 64), ofBound,
			q(func(l *report.Latency) float64 { return l.P50 }), q(func(l *report.Latency) float64 { return l.P99 }),
			q(func(l *report.Latency) float64 { return l.P999 }), q(func(l *report.Latency) float64 { return l.Max }),
			strconv.FormatInt(r.Succeeded, 10), strconv.FormatInt(r.Rejected, 10), fmt.Sprintf("%.1f %%", 100*r.ErrorRate)}
		if s := r.Server; s != nil && s.Scrapes > 0 {
			row = append(row, strconv.FormatFloat(s.PeakGoroutines, 'f', 0, 64), strconv.FormatFloat(s.PeakThreads, 'f', 0, 64),
				report.FormatBytes(s.PeakRSSBytes), perInFlight(*s), report.FormatSeconds(s.AcquireWaitP99))
		} else {
			row = append(row, "-", "-", "-", "-", "-")
		}
		row = append(row, verdict(r.SLO))
		tab.Rows = append(tab.Rows, row)
	}
	return tab
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

func perInFlight(s report.Server) string {
	v := RSSPerInFlight(s)
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f KiB", v/1024)
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
