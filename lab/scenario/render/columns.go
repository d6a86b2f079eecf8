package render

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/orderlab/orderlab/internal/ledger"
	"github.com/orderlab/orderlab/lab/scenario/result"
	"github.com/orderlab/orderlab/loadtest/report"
)

// httpColumn is one column of an HTTP phase's table: a figure of a run and
// how to write it. A phase that ran each target several times (Runner.Count)
// shows the median of the runs and, in brackets, their range.
type httpColumn struct {
	head   string
	value  func(p result.PhaseResult, r report.Run) (float64, bool) // false: no figure for this run
	format func(float64) string
	when   func(runs []report.Run) bool // nil: always
	detail bool                         // in the server-side table (Table.Split)
}

func figure(f func(report.Run) float64) func(result.PhaseResult, report.Run) (float64, bool) {
	return func(_ result.PhaseResult, r report.Run) (float64, bool) { return f(r), true }
}

func successLatency(f func(*report.Latency) float64) func(result.PhaseResult, report.Run) (float64, bool) {
	return func(_ result.PhaseResult, r report.Run) (float64, bool) {
		l := r.Latency.Success
		if l == nil || l.Count == 0 {
			return 0, false
		}
		return f(l), true
	}
}

// lagFigure is a figure of the generator's own lateness (loadtest/README.md, What
// the columns mean: lag p50, lag p99, lag max).
func lagFigure(f func(*report.Latency) float64) func(result.PhaseResult, report.Run) (float64, bool) {
	return func(_ result.PhaseResult, r report.Run) (float64, bool) {
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

// anyRetryPolicy: some run resent 429s under a policy, or retried at all.
func anyRetryPolicy(runs []report.Run) bool {
	return slices.ContainsFunc(runs, func(r report.Run) bool {
		return r.Retries > 0 || (r.Settings.Retry != "" && r.Settings.Retry != "none")
	})
}

func serverFigure(f func(report.Server) float64) func(result.PhaseResult, report.Run) (float64, bool) {
	return func(_ result.PhaseResult, r report.Run) (float64, bool) {
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
	{head: "of bound", value: func(p result.PhaseResult, r report.Run) (float64, bool) {
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
	{head: "attempts/ok", value: func(_ result.PhaseResult, r report.Run) (float64, bool) {
		return r.AttemptsPerSuccess, r.AttemptsPerSuccess > 0
	},
		format: decimals(2), when: func(runs []report.Run) bool {
			return slices.ContainsFunc(runs, func(r report.Run) bool { return r.Retries > 0 })
		}},
	{head: "amplification", value: func(_ result.PhaseResult, r report.Run) (float64, bool) {
		return r.Amplification, r.Amplification > 0
	}, format: decimals(2), when: anyRetryPolicy},
	{head: "server rej./s", detail: true, value: func(_ result.PhaseResult, r report.Run) (float64, bool) {
		v, _, ok := report.Figure("server_rejections", r)
		return v, ok
	}, format: decimals(0), when: anyRetryPolicy},
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
	{head: "pool use", detail: true, value: func(p result.PhaseResult, r report.Run) (float64, bool) {
		if p.BoundRPS <= 0 || r.Server == nil || r.Server.PoolUse <= 0 {
			return 0, false // no bound, or a report from before the hold's outcome label
		}
		return 100 * r.Server.PoolUse, true
	}, format: func(v float64) string { return fmt.Sprintf("%.0f %%", v) }, when: func(runs []report.Run) bool {
		return slices.ContainsFunc(runs, func(r report.Run) bool { return r.Server != nil && r.Server.PoolUse > 0 })
	}},
	{head: "pool wait p99", detail: true, value: func(p result.PhaseResult, r report.Run) (float64, bool) {
		if r.Server == nil || r.Server.Scrapes == 0 {
			return 0, false
		}
		wait, _ := poolWaitP99(p, r)
		return wait, true
	}, format: report.FormatSeconds},
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
