package front

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/orderlab/orderlab/lab/front/api"
	"github.com/orderlab/orderlab/lab/front/mystery"
	"github.com/orderlab/orderlab/lab/scenario"
)

// byWhom is who starts a run: the name given, at most 64 bytes, or
// "someone at" the remote host.
func byWhom(r *http.Request, name string) string {
	by := strings.TrimSpace(name)
	if len(by) > 64 {
		by = by[:64]
	}
	if by == "" {
		by = "someone at " + remoteHost(r)
	}
	return by
}

// launch starts sc (quick: scenario.Quick of it) as the run in progress,
// a mystery when sec is set, and returns its state; or answers why it
// cannot start and returns nil.
func (s *Server) launch(w http.ResponseWriter, sc scenario.Scenario, quick bool, by string, sec mystery.Secret) *runState {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.current != nil {
		api.Fail(w, http.StatusConflict, "%s", busy(s.current.view()))
		return nil
	}
	if s.resetting {
		api.Fail(w, http.StatusConflict, "the knobs are being reset to their defaults: start the run when that is done")
		return nil
	}
	if s.ctx.Err() != nil {
		api.Fail(w, http.StatusServiceUnavailable, "the front page is shutting down")
		return nil
	}
	s.seq++
	now := time.Now().UTC()
	run := sc
	if quick {
		run = scenario.Quick(sc)
	}
	rs := &runState{done: make(chan struct{}), secret: sec}
	rs.run = api.Run{ID: s.seq, Scenario: sc.Name, Number: sc.Number, Title: run.Title, Quick: quick, Mystery: sec != nil, By: by,
		State: api.StateRunning, StartedAt: now, EndsAt: now.Add(run.Planned(quick)), Board: s.cfg.Runner.Board,
		Fix: sc.Fix, PhaseStarts: []api.PhaseStart{}}
	for _, p := range run.Phases {
		rs.run.Phases = append(rs.run.Phases, p.Name)
	}
	for _, e := range run.Expect {
		who := e.Target
		if who == "" {
			who = "every service"
		}
		rs.run.Explanation = append(rs.run.Explanation, who+": "+e.Says)
	}
	ctx, cancel := context.WithCancel(s.ctx)
	rs.cancel = cancel
	s.current = rs
	s.wg.Add(1)
	go s.execute(ctx, rs, sc, quick)
	if sec != nil {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			sec.Watch(s.ctx, rs.done)
		}()
	}
	fmt.Fprintf(s.cfg.Log, "front: run %d: %s%s, started by %s\n", rs.run.ID, sc.Name, map[bool]string{true: " (quick)"}[quick], by)
	return rs
}
