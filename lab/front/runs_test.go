package front

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/orderlab/orderlab/lab/front/api"
	"github.com/orderlab/orderlab/lab/scenario"
	"github.com/orderlab/orderlab/lab/scenario/result"
)

func TestOneRunAtATimeAndStopPutsTheKnobsBack(t *testing.T) {
	f := newFixture(t)
	before := map[string]map[string]string{"unbounded": f.knobs("unbounded"), "semaphore": f.knobs("semaphore")}

	var run api.Run
	if code, body := f.call("POST", "/api/runs", startRequest{Scenario: "long", By: "tester"}, &run); code != http.StatusAccepted {
		t.Fatalf("start: %d %s", code, body)
	}
	during := f.waitRun(run.ID, "the phase under way, with its knobs", func(r api.Run) error {
		if r.Phase == nil || r.Phase.Name != "hold" || r.Phase.EndsAt.IsZero() {
			return fmt.Errorf("phase %+v", r.Phase)
		}
		return nil
	})
	if ps := during.PhaseStarts; len(ps) != 1 || ps[0].Name != "hold" || ps[0].At.Before(during.StartedAt) || !ps[0].At.Equal(during.Phase.StartedAt) {
		t.Errorf("phase starts %+v, want hold's, when the phase under way started (%v)", ps, during.Phase.StartedAt)
	}
	if got := f.knobs("semaphore"); got["REQUEST_TIMEOUT"] != "3s" || got["LIMIT_WAIT"] != "50ms" {
		t.Errorf("semaphore's knobs during the run: %v, want the scenario's", got)
	}

	code, body := f.call("POST", "/api/runs", startRequest{Scenario: "short"}, nil)
	if code != http.StatusConflict || !strings.Contains(body, "run 1 (1 long) is in progress, started by tester") ||
		!strings.Contains(body, "ending about") {
		t.Errorf("second start: %d %s, want 409 naming the run, who and when it ends", code, body)
	}
	if code, body := f.call("POST", "/api/knobs/reset", nil, nil); code != http.StatusConflict {
		t.Errorf("reset during a run: %d %s, want 409", code, body)
	}
	var listed struct {
		Current *api.Run
		Runs    []api.Run
	}
	if f.call("GET", "/api/runs", nil, &listed); listed.Current == nil || listed.Current.ID != run.ID ||
		!strings.Contains(listed.Current.Board, "&to=now&refresh=5s") {
		t.Errorf("GET /api/runs during the run: %+v, want it current with a refreshing board link", listed.Current)
	}

	if code, body := f.call("POST", "/api/runs/current/stop", nil, nil); code != http.StatusAccepted {
		t.Fatalf("stop: %d %s", code, body)
	}
	stopped := f.waitRun(run.ID, "the run stopped", func(r api.Run) error {
		if r.State != api.StateStopped {
			return fmt.Errorf("state %s", r.State)
		}
		return nil
	})
	for name, want := range before {
		if got := f.knobs(name); !maps.Equal(got, want) {
			t.Errorf("%s's knobs after Stop: %v, want them back at %v", name, got, want)
		}
	}
	if stopped.Error != "" || stopped.Report == nil || stopped.Board == "" || strings.Contains(stopped.Board, "to=now") {
		t.Errorf("stopped run %+v: want no error, a report and the board on its exact range", stopped)
	}
	if code, body := f.call("POST", "/api/runs/current/stop", nil, nil); code != http.StatusConflict || !strings.Contains(body, "no run in progress") {
		t.Errorf("stop with no run: %d %s, want 409", code, body)
	}
}

func TestARunEndsWithVerdictsAndItsReports(t *testing.T) {
	f := newFixture(t)
	var run api.Run
	if code, body := f.call("POST", "/api/runs", startRequest{Scenario: "short", Quick: true}, &run); code != http.StatusAccepted {
		t.Fatalf("start: %d %s", code, body)
	}
	if run.By != "someone at 127.0.0.1" {
		t.Errorf("by %q, want the remote host when no name is given", run.By)
	}
	done := f.waitRun(run.ID, "the run's end", func(r api.Run) error {
		if r.State == api.StateRunning || r.State == api.StateStopping {
			return fmt.Errorf("state %s", r.State)
		}
		return nil
	})
	if done.State != api.StateDone || done.Error != "" {
		t.Fatalf("run ended %s: %s", done.State, done.Error)
	}
	marks := map[string]string{}
	for _, v := range done.Verdicts {
		marks[v.Target] = v.Mark
		if v.Mark != result.VerdictRead && (len(v.Measured) == 0 || v.SLO == "") {
			t.Errorf("verdict %+v: want the expected and the measured figure", v)
		}
	}
	if marks["semaphore"] != result.VerdictMet || marks["unbounded"] != result.VerdictMissed || marks["all"] != result.VerdictRead {
		t.Errorf("verdicts %+v: want semaphore met, unbounded missed, the third to be read", done.Verdicts)
	}
	if pic := done.Picture; pic == nil || len(pic.Phases) != 1 || len(pic.Phases[0].Models) != 2 || pic.Phases[0].Models[0].Succeeded == 0 ||
		pic.Phases[0].Models[0].P99Target != 1e-6 || !strings.Contains(done.Conclusion, "1 of 2 expectations with a figure were missed") {
		t.Errorf("picture %+v, conclusion %q: want one phase of two models, unbounded's p99 target 1 µs, one of two missed", done.Picture, done.Conclusion)
	}
	// The page draws the report's own picture: unbounded's missed p99 marked.
	if pic := done.Picture; pic == nil || len(pic.Phases) != 1 || pic.Phases[0].Counts != "committed" ||
		!slices.Equal(pic.Phases[0].Models[0].Missed, []string{"p99<1us"}) || len(pic.Phases[0].Models[1].Missed) != 0 {
		t.Errorf("picture %+v: want the phase counting commits, unbounded's p99<1us missed and nothing of the semaphore's", done.Picture)
	}
	if d := done.Drawing; d == nil || d.Height <= 0 || len(d.Option["series"].([]any)) == 0 {
		t.Errorf("drawing %+v: want the verdict picture as an ECharts option", d)
	}
	// A page opened now shows this run on top: no run in progress, this
	// one the newest, with its verdicts and picture.
	var after struct {
		Current *api.Run
		Runs    []api.Run
	}
	if f.call("GET", "/api/runs", nil, &after); after.Current != nil || len(after.Runs) != 1 || after.Runs[0].ID != done.ID ||
		len(after.Runs[0].Verdicts) != 3 || after.Runs[0].Drawing == nil || after.Runs[0].Conclusion == "" {
		t.Errorf("GET /api/runs after the run: current %+v, runs %+v: want none current and this run first, with its verdict", after.Current, after.Runs)
	}
	if ps := done.PhaseStarts; len(ps) != 1 || ps[0].Name != "orders" || ps[0].At.Before(done.StartedAt) || ps[0].At.After(*done.EndedAt) {
		t.Errorf("phase starts %+v, want the one phase's, within the run (%v to %v)", ps, done.StartedAt, done.EndedAt)
	}
	// The live chart's bound line is the bound of the size that ran.
	sc, _ := f.srv.find("short")
	quick, full := scenario.Quick(sc).Phases[0].Bound.RPS(), sc.Phases[0].Bound.RPS()
	if ps := done.PhaseStarts; len(ps) != 1 || ps[0].BoundRPS != quick || quick == full {
		t.Errorf("phase starts %+v: want the quick bound %.0f/s (full size: %.0f/s)", ps, quick, full)
	}
	if done.Fix != "nothing to fix" || len(done.Explanation) != 3 {
		t.Errorf("fix %q, explanation %q", done.Fix, done.Explanation)
	}
	code, body := f.call("GET", done.Report.HTML, nil, nil)
	if code != http.StatusOK || !strings.Contains(body, "<html") {
		t.Errorf("report HTML: %d %.200s", code, body)
	}
	var res result.Result
	if code, body := f.call("GET", done.Report.JSON, nil, &res); code != http.StatusOK || res.Schema != result.Schema || !res.Quick {
		t.Errorf("report JSON: %d %.200s", code, body)
	}
	if got := f.knobs("unbounded")["DB_DELAY"]; got != "0s" {
		t.Errorf("DB_DELAY after the run: %s, want it back at 0s", got)
	}
	// Unbounded's miss kept its flight recorder window: the report links
	// it relative to itself, where the page serves it.
	snaps := res.Phases[0].Snapshots
	if len(snaps) != 1 || snaps[0].Target != "unbounded" || snaps[0].File == "" || !strings.Contains(body, `href="`+snaps[0].File+`"`) {
		t.Fatalf("snapshots %+v: want unbounded's, linked from the report", snaps)
	}
	window := strings.TrimSuffix(done.Report.HTML, "report.html") + snaps[0].File
	if code, body := f.call("GET", window, nil, nil); code != http.StatusOK || !strings.HasPrefix(body, "go 1.") {
		t.Errorf("GET %s: %d %.40q, want the execution trace", window, code, body)
	}
	if code, body := f.call("GET", strings.TrimSuffix(done.Report.HTML, "report.html")+"other.trace", nil, nil); code != http.StatusNotFound ||
		!strings.Contains(body, "no file") {
		t.Errorf("a file the run did not keep: %d %s, want 404", code, body)
	}

	// Keep 2: the third run's end deletes the first one's reports.
	for range 2 {
		var next api.Run
		if code, body := f.call("POST", "/api/runs", startRequest{Scenario: "short", Quick: true}, &next); code != http.StatusAccepted {
			t.Fatalf("start: %d %s", code, body)
		}
		f.waitRun(next.ID, "the run's end", func(r api.Run) error {
			if r.EndedAt == nil {
				return fmt.Errorf("state %s", r.State)
			}
			return nil
		})
	}
	if code, _ := f.call("GET", done.Report.HTML, nil, nil); code != http.StatusNotFound {
		t.Errorf("the first run's report after two more with -keep 2: %d, want 404", code)
	}
	if _, err := os.Stat(filepath.Join(f.srv.cfg.Runner.Out, "short", snaps[0].File)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the first run's flight recorder window after two more with -keep 2: %v, want it deleted", err)
	}
}

// TestAStoppedRunKeepsWhatWentWrongBesidesTheStop: the runner joins the
// Stop's cancel with any knob it could not put back; the run shows the
// latter and nothing for the Stop alone.
func TestAStoppedRunKeepsWhatWentWrongBesidesTheStop(t *testing.T) {
	restore := errors.New("putting LIMIT back on semaphore: 503")
	phase := fmt.Errorf("phase orders: %w", context.Canceled)
	if err := withoutCancel(errors.Join(phase, errors.Join(nil, context.Canceled))); err != nil {
		t.Errorf("a stop alone: %v, want nil", err)
	}
	if err := withoutCancel(errors.Join(phase, restore)); err == nil || err.Error() != restore.Error() {
		t.Errorf("a stop and a failed restore: %v, want %v", err, restore)
	}
	if err := withoutCancel(restore); err != restore {
		t.Errorf("no stop: %v, want %v", err, restore)
	}
}
