package mystery

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/orderlab/orderlab/lab/diagnose"
	"github.com/orderlab/orderlab/lab/front/api"
)

// askWait bounds one question to Prometheus about the pitfall alerts.
const askWait = 5 * time.Second

// Diagnosis is what the lab sees now: lab diagnose's answer (package
// diagnose), read from the lab's Prometheus, whoever makes the load: a run
// of the page, the background load, or a loadtest of the user's own.
type Diagnosis struct {
	Prometheus string    `json:"prometheus"`
	AskedAt    time.Time `json:"asked_at"`
	// Rules is how many pitfall rules Prometheus evaluates: "no pitfall"
	// means none of them fires.
	Rules int `json:"rules"`
	// Broken are the pitfall rules whose last evaluation failed, so they
	// cannot fire: "Name: error".
	Broken   []string  `json:"broken"`
	Findings []Finding `json:"findings"` // firing
	Pending  []Finding `json:"pending"`  // not yet held as long as their rule's for
}

// Finding is one pitfall alert as the page shows it: lab diagnose -json's
// finding, the alert's summary, the catalog's title, and the board's panel
// of the alerts that fire.
type Finding struct {
	diagnose.Finding
	Summary string `json:"summary"`
	Title   string `json:"title,omitempty"` // the catalog's scenario of that name
	Board   string `json:"board,omitempty"` // "What is firing" from the alert's start to now
}

// ask reads the pitfall alerts from the lab's Prometheus, as lab diagnose
// does.
func (s *Server) ask(ctx context.Context) (diagnose.Report, error) {
	if s.cfg.Prometheus == "" {
		return diagnose.Report{}, fmt.Errorf("the page has no Prometheus to ask (lab front -prometheus URL)")
	}
	ctx, cancel := context.WithTimeout(ctx, askWait)
	defer cancel()
	return diagnose.Read(ctx, s.cfg.HTTP, s.cfg.Prometheus)
}

// Diagnosis answers GET /api/diagnosis: 200 with what the lab sees; 503
// naming Prometheus and why when it cannot ask; 409 while a mystery waits
// for its answer, since the alerts would give it away.
func (s *Server) Diagnosis(w http.ResponseWriter, r *http.Request) {
	if id, ok := s.unansweredMystery(); ok {
		api.Fail(w, http.StatusConflict, "a mystery is running (run %d): what the lab sees is shown once you answer (POST /api/mysteries/%d/answer)", id, id)
		return
	}
	rep, err := s.ask(r.Context())
	if err != nil {
		api.Fail(w, http.StatusServiceUnavailable, "cannot ask Prometheus at %s: %v", s.cfg.Prometheus, err)
		return
	}
	api.WriteJSON(w, http.StatusOK, s.diagnosisOf(rep, time.Now().UTC()))
}

func (s *Server) diagnosisOf(rep diagnose.Report, now time.Time) Diagnosis {
	d := Diagnosis{Prometheus: s.cfg.Prometheus, AskedAt: now, Rules: rep.Rules, Broken: rep.Broken,
		Findings: s.findings(rep.Findings, now), Pending: s.findings(rep.Pending, now)}
	if d.Broken == nil {
		d.Broken = []string{}
	}
	return d
}

func (s *Server) findings(fs []diagnose.Finding, now time.Time) []Finding {
	out := []Finding{}
	for _, f := range fs {
		pf := Finding{Finding: f, Summary: f.Summary, Board: s.panelLink(firingPanel, f.Since.Add(-time.Minute), now)}
		if f.Evidence == nil {
			pf.Evidence = []diagnose.Evidence{}
		}
		if sc, ok := s.find(f.Pitfall); ok {
			pf.Title = sc.Title
		}
		out = append(out, pf)
	}
	return out
}

// panelLink opens the board's panel titled title on from..to (to zero: up
// to now, refreshing); "" when the page knows no board or no such panel.
func (s *Server) panelLink(title string, from, to time.Time) string {
	id, ok := boardPanels[title]
	if !ok || s.cfg.Board == "" {
		return ""
	}
	return rangeLink(s.cfg.Board, from, to) + "&viewPanel=" + url.QueryEscape(fmt.Sprintf("panel-%d", id))
}

// rangeLink is board on from..to; to zero: up to now, refreshing every 5 s.
func rangeLink(board string, from, to time.Time) string {
	if to.IsZero() {
		return api.LiveBoard(board, from)
	}
	sep := "?"
	if u, err := url.Parse(board); err == nil && u.RawQuery != "" {
		sep = "&"
	}
	return fmt.Sprintf("%s%sfrom=%d&to=%d", board, sep, from.UnixMilli(), to.UnixMilli())
}
