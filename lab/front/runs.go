package front

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/orderlab/orderlab/lab/scenario"
	"github.com/orderlab/orderlab/lab/scenario/render"
	"github.com/orderlab/orderlab/lab/scenario/result"
	"github.com/orderlab/orderlab/lab/scenario/runner"
	"github.com/orderlab/orderlab/loadtest/htmlreport"
)

// Run states.
const (
	StateRunning  = "running"  // phases under way
	StateStopping = "stopping" // Stop was asked: the runner is putting the knobs back
	StateStopped  = "stopped"  // stopped before its end; knobs put back
	StateDone     = "done"     // every phase ran
	StateFailed   = "failed"   // a phase could not run; knobs put back
)

// Run is one run as the API shows it.
type Run struct {
	ID       int    `json:"id"`
	Scenario string `json:"scenario"`
	Number   int    `json:"number"`
	Title    string `json:"title"`
	Quick    bool   `json:"quick"`
	// Mystery: a pitfall run without its name (GET /api/mysteries/{id});
	// until it is answered its log, error, verdicts and report are held back.
	Mystery bool   `json:"mystery,omitempty"`
	By      string `json:"by"` // the name given, or "someone at" the remote host
	State   string `json:"state"`
	// StartedAt and EndsAt (planned: the load of every phase, knob changes
	// not counted), EndedAt once it ended.
	StartedAt time.Time  `json:"started_at"`
	EndsAt    time.Time  `json:"ends_at"`
	EndedAt   *time.Time `json:"ended_at,omitempty"`
	Phases    []string   `json:"phases"`
	Phase     *Phase     `json:"phase,omitempty"` // the phase under way
	// PhaseStarts is when each phase began, its knobs applied, in order:
	// the live charts mark each.
	PhaseStarts []PhaseStart `json:"phase_starts"`
	Error       string       `json:"error,omitempty"`
	// Board opens the board on the run's range: up to now, refreshing,
	// while it runs; its exact range once it ended.
	Board    string           `json:"board,omitempty"`
	Verdicts []result.Verdict `json:"verdicts,omitempty"`
	// Picture is the verdict's figures as one chart draws them, Drawing
	// that chart (the ECharts option the report draws too), and
	// Conclusion the verdicts in a sentence, once the run ended.
	Picture    *result.Picture     `json:"picture,omitempty"`
	Drawing    *htmlreport.Drawing `json:"picture_drawing,omitempty"`
	Conclusion string              `json:"conclusion,omitempty"`
	// Explanation is what the scenario expects of each target, and Fix the
	// remedy, from the catalog.
	Explanation []string `json:"explanation,omitempty"`
	Fix         string   `json:"fix,omitempty"`
	Report      *Links   `json:"report,omitempty"` // once written
	Log         []string `json:"log"`              // the runner's last lines
}

// Phase is the phase under way.
type Phase struct {
	Name      string    `json:"name"`
	Index     int       `json:"index"` // from 0
	Of        int       `json:"of"`
	StartedAt time.Time `json:"started_at"`
	// EndsAt is when its planned load ends; zero when only the load decides.
	EndsAt time.Time `json:"ends_at,omitzero"`
}

// PhaseStart is a phase beginning.
type PhaseStart struct {
	Name string    `json:"name"`
	At   time.Time `json:"at"`
	// BoundRPS is the phase's Little's-law bound at the size that runs
	// (quick or full); 0 when the phase states none.
	BoundRPS float64 `json:"bound_rps,omitempty"`
}

// Links are a run's report and result, served by the page.
type Links struct {
	HTML string `json:"html"`
	JSON string `json:"json"`
}

// runState is a run and what the server keeps of it.
type runState struct {
	mu     sync.Mutex
	run    Run
	files  render.Files
	cancel context.CancelFunc
	done   chan struct{}
	log    logTail
	// mystery is set for a mystery run; guarded by mu.
	mystery *mystery
}

func (rs *runState) view() Run {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	v := rs.run
	v.Log = rs.log.lines()
	if v.State == StateRunning || v.State == StateStopping {
		v.Board = liveBoard(v.Board, v.StartedAt)
	}
	if rs.hidden() {
		v = withheld(v)
	}
	return v
}

// liveBoard is the board from start to now, refreshing every 5 s.
func liveBoard(board string, start time.Time) string {
	if board == "" {
		return ""
	}
	sep := "?"
	if strings.Contains(board, "?") {
		sep = "&"
	}
	return fmt.Sprintf("%s%sfrom=%d&to=now&refresh=5s", board, sep, start.UnixMilli())
}

// busy is the answer to a start while a run is in progress.
func busy(v Run) string {
	return fmt.Sprintf("run %d (%d %s) is in progress, started by %s at %s, ending about %s: stop it first (POST /api/runs/current/stop)",
		v.ID, v.Number, v.Scenario, v.By, v.StartedAt.UTC().Format("15:04:05 UTC"), v.EndsAt.UTC().Format("15:04:05 UTC"))
}

type startRequest struct {
	Scenario string `json:"scenario"`
	Quick    bool   `json:"quick"`
	By       string `json:"by"`
}

func (s *Server) startRun(w http.ResponseWriter, r *http.Request) {
	var req startRequest
	if err := decode(r, &req); err != nil {
		fail(w, http.StatusBadRequest, `want {"scenario": NAME, "quick": true|false, "by": "your name"}: %v`, err)
		return
	}
	sc, ok := s.find(req.Scenario)
	if !ok {
		fail(w, http.StatusNotFound, "no scenario %q (GET /api/catalog lists them)", req.Scenario)
		return
	}
	if ok, why := scenario.InLab(sc); !ok {
		fail(w, http.StatusUnprocessableEntity, "%s cannot run in the running lab: it %s", sc.Name, why)
		return
	}
	if rs := s.launch(w, sc, req.Quick, byWhom(r, req.By), nil); rs != nil {
		writeJSON(w, http.StatusAccepted, rs.view())
	}
}

// execute runs sc with the runner, then files the run among the finished.
func (s *Server) execute(ctx context.Context, rs *runState, sc scenario.Scenario, quick bool) {
	defer s.wg.Done()
	defer close(rs.done)
	r := s.cfg.Runner
	r.Mode = &s.cfg.Lab
	r.Quick, r.Count, r.Log = quick, 1, &rs.log
	r.Progress = func(ev runner.PhaseEvent) {
		rs.mu.Lock()
		defer rs.mu.Unlock()
		if ev.Ended {
			rs.run.Phase = nil
			return
		}
		now := time.Now().UTC()
		p := &Phase{Name: ev.Phase, Index: ev.Index, Of: ev.Of, StartedAt: now}
		if ev.Planned > 0 {
			p.EndsAt = now.Add(ev.Planned)
		}
		rs.run.Phase = p
		rs.run.PhaseStarts = append(rs.run.PhaseStarts, PhaseStart{Name: ev.Phase, At: now, BoundRPS: ev.BoundRPS})
	}
	res, files, err := func() (res *result.Result, files render.Files, err error) {
		defer func() {
			if p := recover(); p != nil { // the runner has put the knobs back
				err = fmt.Errorf("the run panicked: %v", p)
			}
		}()
		return r.Run(ctx, sc)
	}()
	now := time.Now().UTC()
	rs.mu.Lock()
	v := &rs.run
	v.EndedAt, v.Phase = &now, nil
	switch {
	case ctx.Err() != nil:
		v.State = StateStopped
	case err != nil:
		v.State = StateFailed
	default:
		v.State = StateDone
	}
	if v.State == StateStopped {
		err = withoutCancel(err) // the Stop itself; a knob or proxy not put back stays
	}
	if err != nil {
		v.Error = err.Error()
	}
	if res != nil {
		pic := result.PictureOf(res)
		drawing := result.PictureDrawing(pic)
		v.Verdicts, v.Board, v.Picture, v.Drawing, v.Conclusion = result.VerdictsOf(res), res.Board, &pic, &drawing, result.Conclusion(res)
	}
	if files.HTML != "" {
		rs.files = files
		base := fmt.Sprintf("/api/runs/%d/", v.ID)
		v.Report = &Links{HTML: base + "report.html", JSON: base + "report.json"}
	}
	state, id := v.State, v.ID
	rs.mu.Unlock()
	fmt.Fprintf(s.cfg.Log, "front: run %d: %s, %s\n", id, sc.Name, state)

	s.mu.Lock()
	defer s.mu.Unlock()
	s.current = nil
	s.runs = append(s.runs, rs)
	for len(s.runs) > s.cfg.Keep {
		old := s.runs[0]
		s.runs = s.runs[1:]
		for _, f := range append([]string{old.files.JSON, old.files.Markdown, old.files.HTML}, old.files.Snapshots...) {
			if f != "" {
				_ = os.Remove(f)
			}
		}
	}
}

func (s *Server) listRuns(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	cur, runs := s.current, append([]*runState(nil), s.runs...)
	s.mu.Unlock()
	out := struct {
		Current *Run  `json:"current"`
		Runs    []Run `json:"runs"` // finished, newest first
	}{Runs: []Run{}}
	if cur != nil {
		v := cur.view()
		out.Current = &v
	}
	for i := len(runs) - 1; i >= 0; i-- {
		v := runs[i].view()
		v.Log = nil
		out.Runs = append(out.Runs, v)
	}
	writeJSON(w, http.StatusOK, out)
}

// lookup finds run id ("current" included) among the current and kept runs.
func (s *Server) lookup(id string) *runState {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id == "current" {
		return s.current
	}
	n, err := strconv.Atoi(id)
	if err != nil {
		return nil
	}
	if s.current != nil && s.current.run.ID == n {
		return s.current
	}
	for _, rs := range s.runs {
		if rs.run.ID == n {
			return rs
		}
	}
	return nil
}

func (s *Server) getRun(w http.ResponseWriter, r *http.Request) {
	rs := s.lookup(r.PathValue("id"))
	if rs == nil {
		fail(w, http.StatusNotFound, "no run %s among the current one and the last %d", r.PathValue("id"), s.cfg.Keep)
		return
	}
	writeJSON(w, http.StatusOK, rs.view())
}

func (s *Server) stopRun(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	rs := s.current
	s.mu.Unlock()
	if rs == nil {
		fail(w, http.StatusConflict, "no run in progress: nothing to stop")
		return
	}
	rs.mu.Lock()
	if rs.run.State == StateRunning {
		rs.run.State = StateStopping
	}
	rs.mu.Unlock()
	rs.cancel()
	fmt.Fprintf(s.cfg.Log, "front: run %d: stop asked by %s\n", rs.run.ID, r.RemoteAddr)
	// Wait a little, so that a quick restore answers with the final state.
	select {
	case <-rs.done:
	case <-time.After(5 * time.Second):
	case <-r.Context().Done():
	}
	writeJSON(w, http.StatusAccepted, rs.view())
}

// report serves the file of a run that pick picks from its files, given
// the request's {file}.
func (s *Server) report(pick func(f render.Files, file string) string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rs := s.lookup(r.PathValue("id"))
		if rs == nil {
			fail(w, http.StatusNotFound, "no run %s among the current one and the last %d", r.PathValue("id"), s.cfg.Keep)
			return
		}
		rs.mu.Lock()
		path, hidden := pick(rs.files, r.PathValue("file")), rs.hidden()
		rs.mu.Unlock()
		if hidden {
			fail(w, http.StatusConflict, "run %s is a mystery: its report names it, and is served once it is answered (POST /api/mysteries/%s/answer)", r.PathValue("id"), r.PathValue("id"))
			return
		}
		if path == "" && r.PathValue("file") != "" {
			fail(w, http.StatusNotFound, "run %s has no file %q: its report links the flight recorder snapshots it kept", r.PathValue("id"), r.PathValue("file"))
			return
		}
		if path == "" {
			fail(w, http.StatusNotFound, "run %s has no report yet: it is written when the run ends", r.PathValue("id"))
			return
		}
		http.ServeFile(w, r, path)
	}
}

// snapshotFile is the flight recorder snapshot of f named file, which
// the report links relative to itself; "" for any other name.
func snapshotFile(f render.Files, file string) string {
	for _, p := range f.Snapshots {
		if filepath.Base(p) == file {
			return p
		}
	}
	return ""
}

// withoutCancel is err without the parts that only say the run was
// canceled: a stopped run's error keeps what went wrong besides the Stop
// (a knob the runner could not put back), and is nil when nothing did.
func withoutCancel(err error) error {
	if err == nil {
		return nil
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		var kept []error
		for _, e := range joined.Unwrap() {
			if e = withoutCancel(e); e != nil {
				kept = append(kept, e)
			}
		}
		return errors.Join(kept...)
	}
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
