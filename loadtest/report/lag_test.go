package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/orderlab/orderlab/loadtest/attack"
)

// lagRun is an open run of 1000 successes of 1 ms (so a p50 of 1 ms) whose
// generator was lag late for every request; late of them fell due while
// every connection was busy.
func lagRun(t *testing.T, mode attack.Mode, lag time.Duration, late int64) Run {
	t.Helper()
	res := attack.NewResult()
	res.Mode = mode
	res.Started = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	res.Elapsed = time.Second
	for range 1000 {
		_ = res.Success.RecordValue(1000)
		_ = res.SuccessUncorrected.RecordValue(1000)
		_ = res.SchedulerLag.RecordValue(lag.Microseconds())
	}
	res.Status[200], res.Sent, res.Late = 1000, 1000, late
	cfg := sampleConfig()
	cfg.Mode = mode
	run, err := FromResult("svc", "http://127.0.0.1:8081/", cfg, res, nil)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// TestLagWarning: an open run warns when its lateness p99 is above LagShare
// of its p50, and names the cause: the generator, or every connection busy.
func TestLagWarning(t *testing.T) {
	for _, c := range []struct {
		name string
		mode attack.Mode
		lag  time.Duration
		late int64
		want string // "" no warning
	}{
		{"small", attack.ModeOpen, 90 * time.Microsecond, 0, ""},
		{"at the share", attack.ModeOpen, 100 * time.Microsecond, 0, ""},
		{"generator", attack.ModeOpen, 150 * time.Microsecond, 0, "the generator, not the service, is the bottleneck"},
		{"few late", attack.ModeOpen, 150 * time.Microsecond, 10, "the generator, not the service, is the bottleneck"},
		{"connections", attack.ModeOpen, 150 * time.Microsecond, 11, "11 requests fell due while all 100 connections were busy: raise -c"},
		{"closed", attack.ModeClosed, 500 * time.Microsecond, 0, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			run := lagRun(t, c.mode, c.lag, c.late)
			switch {
			case c.want == "" && len(run.Warnings) > 0:
				t.Errorf("warnings %q, want none", run.Warnings)
			case c.want != "" && (len(run.Warnings) != 1 || !strings.Contains(run.Warnings[0], c.want)):
				t.Errorf("warnings %q, want one saying %q", run.Warnings, c.want)
			}
		})
	}
}

// TestLatenessIsInEveryTable: the summary table, its Markdown, the detail
// and the JSON carry the lateness p50, p99 and max, and the warning.
func TestLatenessIsInEveryTable(t *testing.T) {
	runs := []Run{lagRun(t, attack.ModeOpen, 250*time.Microsecond, 0)}
	head, rows := Table(runs)
	col := map[string]string{}
	for i, h := range head {
		col[h] = rows[0][i]
	}
	if col["lag p50"] != "250µs" || col["lag p99"] != "250µs" || col["lag max"] != "250µs" {
		t.Errorf("lag columns %q %q %q, want 250µs each (head %q)", col["lag p50"], col["lag p99"], col["lag max"], head)
	}
	var sum, md, detail, js bytes.Buffer
	if err := WriteSummary(&sum, runs); err != nil {
		t.Fatal(err)
	}
	if err := WriteMarkdown(&md, runs); err != nil {
		t.Fatal(err)
	}
	if err := WriteDetail(&detail, runs[0]); err != nil {
		t.Fatal(err)
	}
	rep := New("open", nil)
	rep.Runs = runs
	if err := Write(&js, rep); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"summary": sum.String(), "markdown": md.String(), "detail": detail.String(), "json": js.String()} {
		if !strings.Contains(out, "is the bottleneck") {
			t.Errorf("%s has no lateness warning:\n%s", name, out)
		}
	}
	for name, out := range map[string]string{"summary": sum.String(), "markdown": md.String()} {
		if !strings.Contains(out, "lag p99") {
			t.Errorf("%s has no lateness column:\n%s", name, out)
		}
	}
	if !strings.Contains(detail.String(), "lag (sent - due)") || !strings.Contains(js.String(), `"scheduler_lag"`) {
		t.Errorf("detail or JSON lacks the lateness:\n%s", detail.String())
	}
	closed := lagRun(t, attack.ModeClosed, 5*time.Microsecond, 0)
	detail.Reset()
	if err := WriteDetail(&detail, closed); err != nil {
		t.Fatal(err)
	}
	if closed.Latency.SchedulerLag == nil || !strings.Contains(detail.String(), "answer to next send") {
		t.Errorf("a closed run's gap from answer to next request is not reported:\n%s", detail.String())
	}
}
