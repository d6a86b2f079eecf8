package runner

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/orderlab/orderlab/internal/httpjson"
	"github.com/orderlab/orderlab/lab/diagnose"
	"github.com/orderlab/orderlab/lab/scenario/result"
	"github.com/orderlab/orderlab/loadtest/report"
)

// flightRecorderPath is where a service's admin listener serves its flight
// recorder's window: FlightRecorderPath of services/internal/telemetry,
// which the lab may not import (TestLabRunAgainstTheRealServices reads
// it from the real services).
const flightRecorderPath = "/debug/flightrecorder"

// maxSnapshot bounds a window kept: the services' recorder keeps about
// 16 MiB (a hint to runtime/trace, not a promise), so an answer four times
// that is a recorder gone wrong. It is not kept, and the report says so.
const maxSnapshot = 64 << 20

const (
	snapshotWait = 30 * time.Second // one GET of a window
	askWait      = 5 * time.Second  // one question to Prometheus
)

// evidence keeps the flight recorder snapshots of one run of a scenario,
// beside its report: a target's, right after its run of a phase, when the
// run missed an expectation or a pitfall alert fires on the target then;
// at most one per phase and target, whatever the repetitions.
//
// Right after the run is the one moment that works: the recorder keeps
// the last ~10 s, so the window then ends with the run under the phase's
// load and knobs. Later the service idles (the lab), serves the next
// target's load, or is stopped (a local run stops it once its run is
// done), and the next phase changes its knobs. A verdict is known then for
// every expectation but a versus term against a phase still to come
// (result.Misses): that one cannot ask for a snapshot.
type evidence struct {
	dir, stamp string // the report's: snapshots go to dir/stamp-<phase>-<target>.trace
	prometheus string // asked about pitfall alerts; "": not asked
	hc         *http.Client
	log        io.Writer
	taken      map[[2]string]bool // phase, target
	unasked    bool               // Prometheus could not be asked, and the log said so
}

func newEvidence(dir, stamp, prometheus string, log io.Writer) *evidence {
	return &evidence{dir: dir, stamp: stamp, prometheus: prometheus, hc: http.DefaultClient, log: log, taken: map[[2]string]bool{}}
}

// after looks at run, target's run of phase i in repetition rep (already
// among the phase's runs), and keeps the target's window if the run
// missed or a pitfall alert fires on the target. admin is the target's
// admin listener.
func (e *evidence) after(ctx context.Context, res *result.Result, i, rep int, run report.Run, admin string) {
	p := &res.Phases[i]
	key := [2]string{p.Name, run.Name}
	if e.taken[key] {
		return
	}
	why := e.why(ctx, res, i, run)
	if why == "" {
		return
	}
	e.taken[key] = true
	s := e.take(ctx, p.Name, run.Name, admin)
	s.Why, s.Repetition = why, rep
	p.Snapshots = append(p.Snapshots, s)
	if s.Err != "" {
		fmt.Fprintf(e.log, "-- %s %s: no flight recorder snapshot: %s\n", p.Name, run.Name, s.Err)
		return
	}
	fmt.Fprintf(e.log, "-- %s %s: flight recorder snapshot %s (%s), taken because %s\n",
		p.Name, run.Name, filepath.Join(e.dir, s.File), report.FormatBytes(float64(s.Bytes)), why)
}

// why is, in a line, what asks for run's snapshot: the first expectation
// it missed, else a pitfall alert firing on its target; "" for nothing.
func (e *evidence) why(ctx context.Context, res *result.Result, i int, run report.Run) string {
	if ms := result.Misses(res, i, run); len(ms) > 0 {
		w := ms[0].String()
		if len(ms) > 1 {
			w += fmt.Sprintf(" (and %d more missed)", len(ms)-1)
		}
		return w
	}
	if e.prometheus == "" || e.unasked {
		return "" // not asked, or not answering: each ask would wait askWait
	}
	ctx, cancel := context.WithTimeout(ctx, askWait)
	defer cancel()
	seen, err := diagnose.Read(ctx, e.hc, e.prometheus)
	if err != nil {
		if !e.unasked {
			fmt.Fprintf(e.log, "-- pitfall alerts not asked (said once): Prometheus at %s: %v\n", e.prometheus, err)
			e.unasked = true
		}
		return ""
	}
	for _, f := range seen.Findings {
		// An alert keeps firing a minute or two after its cause: one
		// that began before this run is an earlier run's.
		if f.Service == run.Name && !f.Since.Before(run.StartedAt) {
			return oneLine(fmt.Sprintf("pitfall alert %s firing on %s since %s: %s",
				f.Pitfall, f.Service, f.Since.Format(time.RFC3339), f.Summary))
		}
	}
	return ""
}

// take GETs target's window from its admin listener and writes it beside
// the report; what fails is the snapshot's Err.
func (e *evidence) take(ctx context.Context, phase, target, admin string) result.Snapshot {
	s := result.Snapshot{Target: target, TakenAt: time.Now().UTC()}
	if admin == "" {
		s.Err = "the admin listener of " + target + " is not known (-metrics " + target + "=URL)"
		return s
	}
	u := strings.TrimRight(admin, "/") + flightRecorderPath
	ctx, cancel := context.WithTimeout(ctx, snapshotWait)
	defer cancel()
	a, err := httpjson.Do(ctx, e.hc, http.MethodGet, u, nil, nil, maxSnapshot+1)
	switch {
	case err != nil && a.Code == 0:
		s.Err = err.Error()
	case err != nil:
		s.Err = fmt.Sprintf("GET %s: %s: %v", u, a.Status, err)
	case !a.OK():
		s.Err = fmt.Sprintf("GET %s: %s: %s", u, a.Status, oneLine(string(a.Body)))
	case len(a.Body) > maxSnapshot:
		s.Err = fmt.Sprintf("GET %s: more than %s, not kept", u, report.FormatBytes(maxSnapshot))
	case !isTrace(a.Body):
		s.Err = fmt.Sprintf("GET %s: %s, not an execution trace: %.40q", u, a.Status, a.Body)
	}
	if s.Err != "" {
		return s
	}
	name := fmt.Sprintf("%s-%s-%s.trace", e.stamp, fileWord(phase), fileWord(target))
	if err := os.WriteFile(filepath.Join(e.dir, name), a.Body, 0o644); err != nil {
		s.Err = err.Error()
		return s
	}
	s.File, s.Bytes = name, int64(len(a.Body))
	return s
}

// isTrace reports whether b starts as Go's execution trace does:
// "go 1.26 trace" and NULs to 16 bytes.
func isTrace(b []byte) bool {
	head, _, ok := bytes.Cut(b[:min(len(b), 16)], []byte(" trace\x00"))
	return ok && bytes.HasPrefix(head, []byte("go 1."))
}

// fileWord is s as a part of a file name: letters, digits, '.', '_' and
// '-' kept, anything else '-'.
func fileWord(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' {
			return r
		}
		return '-'
	}, s)
}

// oneLine is s with its runs of white space, new lines included, made one
// space, and at most 300 bytes.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = strings.ToValidUTF8(s[:300], "") + "…"
	}
	return s
}
