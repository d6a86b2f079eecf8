package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// WriteDetail writes everything a run measured, for a person.
func WriteDetail(w io.Writer, r Run) error {
	s := r.Settings
	p := &printer{w: w}
	p.f("%s %s %s  [%s]\n", s.Mode, s.Method, r.URL, r.Name)
	p.f("  settings  %s\n", describe(s))
	p.f("  requests  %d sent in %s: %d answered (%d ok, %d rejected), %d errors; %.1f answers/s\n",
		r.Sent, FormatSeconds(r.ElapsedSeconds), r.Answered, r.Succeeded, r.Rejected, r.Errors, r.Throughput)
	p.f("  status    %s\n", statuses(r.Status))
	p.f("  errors    refused %d  reset %d  timeout %d  other %d\n",
		r.ErrorClasses["refused"], r.ErrorClasses["reset"], r.ErrorClasses["timeout"], r.ErrorClasses["other"])
	if r.Throttled > 0 || r.OverBudget > 0 {
		p.f("  client    %d attempts refused by its own throttler (never sent, %d requests ended so), %d rejections not retried (retry budget spent)\n",
			r.Throttled, r.ErrorClasses["throttled"], r.OverBudget)
	}
	if s.Mode == "open" {
		p.f("  schedule  late %d (due while every connection was busy)  unsent %d (due but never sent; counted as errors)\n", r.Late, r.Unsent)
	}
	if r.Retries > 0 || r.WarmupErrors > 0 || r.Canceled > 0 {
		p.f("  also      %d requests sent again, %d warm-up errors, %d canceled\n", r.Retries, r.WarmupErrors, r.Canceled)
	}
	if r.ClientCPUSeconds > 0 {
		p.f("  client    %.2f CPU-seconds, %.0f requests per CPU-second\n", r.ClientCPUSeconds, float64(r.Sent)/r.ClientCPUSeconds)
	}
	p.f("\n")
	const row = "  %-24s %8v %8s %8s %8s %8s %8s %8s %8s\n"
	p.f(row, "latency", "count", "mean", "p50", "p90", "p99", "p99.9", "p99.99", "max")
	l := r.Latency
	for _, h := range []struct {
		name string
		l    *Latency
	}{
		{"success", l.Success},
		{"success, uncorrected", l.SuccessUncorrected},
		{"rejected (429/503)", l.Rejected},
		{"rejected, uncorrected", l.RejectedUncorrected},
		{"failed (other 4xx/5xx)", l.Failed},
		{lagLabel(s.Mode), l.SchedulerLag},
	} {
		if h.l == nil || (h.l.Count == 0 && h.name != "success") {
			continue
		}
		x := h.l
		p.f(row, h.name, x.Count, FormatSeconds(x.Mean), FormatSeconds(x.P50), FormatSeconds(x.P90),
			FormatSeconds(x.P99), FormatSeconds(x.P999), FormatSeconds(x.P9999), FormatSeconds(x.Max))
	}
	for _, m := range r.Warnings {
		p.f("  warning   %s\n", m)
	}
	if sv := r.Server; sv != nil {
		p.f("\n  server    %s (%d scrapes, %d failed)\n", sv.MetricsURL, sv.Scrapes, sv.Errors)
		if sv.Scrapes > 0 {
			p.f("            peak goroutines %.0f  peak threads %.0f  peak RSS %s\n", sv.PeakGoroutines, sv.PeakThreads, FormatBytes(sv.PeakRSSBytes))
			p.f("            peak pool acquired %.0f  peak queue length %.0f\n", sv.PeakPoolAcquired, sv.PeakQueueLength)
			p.f("            pool-acquire wait p99 %s over %.0f acquires  rejections %.0f\n", FormatSeconds(sv.AcquireWaitP99), sv.AcquireWaits, sv.Rejections)
		}
		if sv.LastError != "" {
			p.f("            last scrape error: %s\n", sv.LastError)
		}
	}
	for _, e := range r.SLO {
		verdict := "met"
		if !e.Met {
			verdict = "MISSED"
		}
		p.f("  slo       %-18s %-6s (actual %s)\n", e.Bound, verdict, e.Actual)
	}
	p.f("\n")
	return p.err
}

// lagLabel names the lateness row of mode's latency table.
func lagLabel(mode string) string {
	if mode == "closed" {
		return "answer to next send"
	}
	return "lag (sent - due)"
}

func describe(s Settings) string {
	var parts []string
	switch s.Mode {
	case "burst":
		parts = append(parts, fmt.Sprintf("%d requests at once", s.Concurrency))
		if s.Warmup {
			parts = append(parts, "after a warm-up round")
		}
	case "closed":
		parts = append(parts, fmt.Sprintf("%d connections", s.Concurrency))
	case "open":
		rate := fmt.Sprintf("%g/s", s.Rate)
		if s.RampSeconds > 0 {
			rate = fmt.Sprintf("%g/s rising to %g/s over %gs", s.RampFrom, s.Rate, s.RampSeconds)
		}
		parts = append(parts, rate, fmt.Sprintf("at most %d connections", s.Concurrency))
		if s.Shard != "" {
			parts = append(parts, "shard "+s.Shard+" of the schedule")
		}
	}
	if s.DurationSeconds > 0 {
		parts = append(parts, fmt.Sprintf("for %gs", s.DurationSeconds))
	}
	if s.Requests > 0 && s.Mode != "burst" {
		parts = append(parts, fmt.Sprintf("at most %d requests", s.Requests))
	}
	parts = append(parts, "client "+s.Client, fmt.Sprintf("timeout %gs", s.TimeoutSeconds))
	return strings.Join(parts, ", ")
}

func statuses(m map[string]int64) string {
	if len(m) == 0 {
		return "-"
	}
	var b strings.Builder
	for _, c := range slices.Sorted(maps.Keys(m)) {
		b.WriteString(c + ": " + strconv.FormatInt(m[c], 10) + "  ")
	}
	return strings.TrimSpace(b.String())
}

// printer remembers the first write error.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) f(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}
