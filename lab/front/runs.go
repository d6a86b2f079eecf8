package front

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/orderlab/orderlab/lab/front/api"
	"github.com/orderlab/orderlab/lab/front/mystery"
	"github.com/orderlab/orderlab/lab/scenario"
	"github.com/orderlab/orderlab/lab/scenario/render"
	"github.com/orderlab/orderlab/lab/scenario/result"
	"github.com/orderlab/orderlab/lab/scenario/runner"
)

// runState is a run and what the server keeps of it.
type runState struct {
	mu     sync.Mutex
	run    api.Run
	files  render.Files
	cancel context.CancelFunc
	done   chan struct{}
	log    logTail
	// secret is set for a mystery run (package mystery): until it is
	// answered, the run's views are withheld and its report refused.
	secret mystery.Secret
}

func (rs *runState) view() api.Run {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	v := rs.run
	v.Log = rs.log.lines()
	if v.State == api.StateRunning || v.State == api.StateStopping {
		v.Board = api.LiveBoard(v.Board, v.StartedAt)
	}
	if rs.hidden() {
		v = rs.secret.Withhold(v)
	}
	return v
}

// busy is the answer to a start while a run is in progress.
func busy(v api.Run) string {
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
	if err := api.Decode(r, &req); err != nil {
		api.Fail(w, http.StatusBadRequest, `want {"scenario": NAME, "quick": true|false, "by": "your name"}: %v`, err)
		return
	}
	sc, ok := s.find(req.Scenario)
	if !ok {
		api.Fail(w, http.StatusNotFound, "no scenario %q (GET /api/catalog lists them)", req.Scenario)
		return
	}
	if ok, why := scenario.InLab(sc); !ok {
		api.Fail(w, http.StatusUnprocessableEntity, "%s cannot run in the running lab: it %s", sc.Name, why)
		return
	}
	if rs := s.launch(w, sc, req.Quick, byWhom(r, req.By), nil); rs != nil {
		api.WriteJSON(w, http.StatusAccepted, rs.view())
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
		p := &api.Phase{Name: ev.Phase, Index: ev.Index, Of: ev.Of, StartedAt: now}
		if ev.Planned > 0 {
			p.EndsAt = now.Add(ev.Planned)
		}
		rs.run.Phase = p
		rs.run.PhaseStarts = append(rs.run.PhaseStarts, api.PhaseStart{Name: ev.Phase, At: now, BoundRPS: ev.BoundRPS})
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
		v.State = api.StateStopped
	case err != nil:
		v.State = api.StateFailed
	default:
		v.State = api.StateDone
	}
	if v.State == api.StateStopped {
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
		v.Report = &api.Links{HTML: base + "report.html", JSON: base + "report.json"}
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
		Current *api.Run  `json:"current"`
		Runs    []api.Run `json:"runs"` // finished, newest first
	}{Runs: []api.Run{}}
	if cur != nil {
		v := cur.view()
		out.Current = &v
	}
	for i := len(runs) - 1; i >= 0; i-- {
		v := runs[i].view()
		v.Log = nil
		out.Runs = append(out.Runs, v)
	}
	api.WriteJSON(w, http.StatusOK, out)
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
		api.Fail(w, http.StatusNotFound, "no run %s among the current one and the last %d", r.PathValue("id"), s.cfg.Keep)
		return
	}
	api.WriteJSON(w, http.StatusOK, rs.view())
}

func (s *Server) stopRun(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	rs := s.current
	s.mu.Unlock()
	if rs == nil {
		api.Fail(w, http.StatusConflict, "no run in progress: nothing to stop")
		return
	}
	rs.mu.Lock()
	if rs.run.State == api.StateRunning {
		rs.run.State = api.StateStopping
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
	api.WriteJSON(w, http.StatusAccepted, rs.view())
}

// report serves the file of a run that pick picks from its files, given
// the request's {file}.
func (s *Server) report(pick func(f render.Files, file string) string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rs := s.lookup(r.PathValue("id"))
		if rs == nil {
			api.Fail(w, http.StatusNotFound, "no run %s among the current one and the last %d", r.PathValue("id"), s.cfg.Keep)
			return
		}
		rs.mu.Lock()
		path, hidden := pick(rs.files, r.PathValue("file")), rs.hidden()
		rs.mu.Unlock()
		if hidden {
			api.Fail(w, http.StatusConflict, "run %s is a mystery: its report names it, and is served once it is answered (POST /api/mysteries/%s/answer)", r.PathValue("id"), r.PathValue("id"))
			return
		}
		if path == "" && r.PathValue("file") != "" {
			api.Fail(w, http.StatusNotFound, "run %s has no file %q: its report links the flight recorder snapshots it kept", r.PathValue("id"), r.PathValue("file"))
			return
		}
		if path == "" {
			api.Fail(w, http.StatusNotFound, "run %s has no report yet: it is written when the run ends", r.PathValue("id"))
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
