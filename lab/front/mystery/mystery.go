package mystery

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/orderlab/orderlab/lab/front/api"
	"github.com/orderlab/orderlab/lab/scenario"
)

// Mystery mode (docs/front-page.md): POST /api/mysteries runs a pitfall drawn
// at random, knobs and load within its recipe's ranges, as a run named
// "mystery"; the server keeps the pitfall until POST /api/mysteries/{id}/answer
// reveals what ran, what the lab diagnosed, and the board's panels on its range.

// mysteryPoll is how often the lab asks Prometheus what it sees while a
// mystery runs: the pitfall rules are evaluated every 5 s.
const mysteryPoll = 5 * time.Second

// afterglow is how long after a mystery run ends, unanswered, the page
// still holds back what the lab sees: the alerts' windows are a minute, so
// they go on naming the pitfall for about that long.
const afterglow = 2 * time.Minute

// mystery is what the server keeps of a mystery run: the page holds it
// beside the run, as its Secret.
type mystery struct {
	srv        *Server
	plan       plan
	mu         sync.Mutex // guards what follows
	answer     string
	answeredAt time.Time
	seen       []Seen // every pitfall alert seen firing during the run, in order
	questions  int    // answers Prometheus gave during the run
	askErr     string // the last question that failed
}

// Seen is a pitfall alert seen firing during a mystery.
type Seen struct {
	Finding
	FirstSeen time.Time `json:"first_seen"`
	LastSeen  time.Time `json:"last_seen"`
}

// note merges what Prometheus answered at at: each firing alert is kept
// once per pitfall and service, with the evidence of its last reading.
func (m *mystery) note(fs []Finding, err error, at time.Time) {
	if err != nil {
		m.askErr = err.Error()
		return
	}
	m.questions++
	for _, f := range fs {
		i := slices.IndexFunc(m.seen, func(s Seen) bool { return s.Pitfall == f.Pitfall && s.Service == f.Service })
		if i < 0 {
			m.seen = append(m.seen, Seen{Finding: f, FirstSeen: at, LastSeen: at})
			continue
		}
		first := m.seen[i].FirstSeen
		m.seen[i] = Seen{Finding: f, FirstSeen: first, LastSeen: at}
	}
}

// Hidden says whether nobody has answered the mystery yet.
func (m *mystery) Hidden() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.answer == ""
}

// Withhold is v without what names the pitfall.
func (m *mystery) Withhold(v api.Run) api.Run { return withheld(v) }

// withheld is a mystery run's view before its answer: what would name the
// pitfall (the runner's log and error name the knobs; the verdicts, the
// picture and the report) is held back.
func withheld(v api.Run) api.Run {
	v.Log = []string{"(the runner's log names the knobs: it is shown once the mystery is answered)"}
	if v.Error != "" {
		v.Error = "the run did not finish; what went wrong names the knobs, and is shown once the mystery is answered"
	}
	v.Verdicts, v.Picture, v.Drawing, v.Conclusion, v.Report, v.Explanation, v.Fix = nil, nil, nil, "", nil, nil, ""
	return v
}

// Mystery is a mystery as the API shows it.
type Mystery struct {
	ID      int      `json:"id"` // its run: GET /api/runs/{id}
	Run     api.Run  `json:"run"`
	Choices []Choice `json:"choices"` // every pitfall the lab's alerts name
	// Reveal, once answered.
	Reveal *Reveal `json:"reveal,omitempty"`
}

// Choice is an answer to pick.
type Choice struct {
	Pitfall string `json:"pitfall"`
	Title   string `json:"title"`
}

// Reveal is what ran, what the lab saw, and where to look.
type Reveal struct {
	Answer     string    `json:"answer"`
	Correct    bool      `json:"correct"`
	AnsweredAt time.Time `json:"answered_at"`
	Ran        Ran       `json:"ran"`
	Diagnosed  Diagnosed `json:"diagnosed"`
	// Board is the board on the run's range (up to now while it runs), and
	// Panels the panels to look at on it: the pitfall alerts that fired,
	// then the scenario's.
	Board  string      `json:"board,omitempty"`
	Panels []PanelLink `json:"panels"`
}

// Ran is the pitfall a mystery ran, and how.
type Ran struct {
	Pitfall  string            `json:"pitfall"`
	Title    string            `json:"title"`
	Page     string            `json:"page"` // the scenario's page in the repository
	Targets  []string          `json:"targets"`
	Knobs    map[string]string `json:"knobs"`
	Load     []string          `json:"load"`
	DB       []string          `json:"db"`
	Settings []Setting         `json:"settings"` // what was drawn, its range and the catalog's value, at full size
	// QuickFactor is what a quick run divided the pools and the load by
	// (scenario.Quick); Knobs and Load are what ran.
	QuickFactor float64 `json:"quick_factor,omitempty"`
}

// Diagnosed is what the lab named during the run (lab diagnose's findings,
// asked every 5 s while it ran, and once after).
type Diagnosed struct {
	Named     bool   `json:"named"`     // the pitfall that ran was among them
	Findings  []Seen `json:"findings"`  // each pitfall alert seen firing, on its service
	Questions int    `json:"questions"` // how often Prometheus answered
	Error     string `json:"error,omitempty"`
}

// PanelLink is a panel of the board on a range.
type PanelLink struct {
	Title string `json:"title"`
	URL   string `json:"url"`
}

// dice is the server's random source for mysteries.
type dice struct {
	mu  sync.Mutex
	rng *rand.Rand
}

func (d *dice) draw(candidates []recipe, catalog func(string) (scenario.Scenario, bool)) (plan, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.rng == nil {
		d.rng = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	return draw(d.rng, candidates, catalog)
}

// candidates are the recipes this page can run: their scenario is in its
// catalog and in the lab, each target is a service it drives, and the
// database proxy answers when the recipe needs it (compose runs it only
// with the profile dbproxy).
func (s *Server) candidates(ctx context.Context) []recipe {
	proxy := s.cfg.Lab.DBProxy != nil && s.cfg.Lab.DBProxy.Control != nil
	if proxy {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := s.cfg.Lab.DBProxy.Control.Get(ctx)
		cancel()
		proxy = err == nil
	}
	var out []recipe
	for _, r := range recipes {
		sc, ok := s.find(r.Pitfall)
		if !ok {
			continue
		}
		if ok, _ := scenario.InLab(sc); !ok {
			continue
		}
		targets := r.Targets
		if targets == nil {
			targets = sc.Targets
		}
		if slices.ContainsFunc(targets, func(t string) bool { _, ok := s.cfg.Lab.Endpoints[t]; return !ok }) {
			continue
		}
		if !proxy && slices.ContainsFunc(sc.Phases, func(p scenario.Phase) bool { return p.DBLatency != nil || p.DBStop != nil }) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// choices are the pitfalls to answer from, in the catalog's order: those
// a mystery runs and those it does not.
func (s *Server) choices() []Choice {
	var names []string
	for _, r := range recipes {
		names = append(names, r.Pitfall)
	}
	names = append(names, notRun...)
	out := []Choice{}
	for _, sc := range s.cfg.Catalog {
		if slices.Contains(names, sc.Name) {
			out = append(out, Choice{Pitfall: sc.Name, Title: sc.Title})
		}
	}
	return out
}

type mysteryRequest struct {
	Quick bool   `json:"quick"`
	By    string `json:"by"`
	// Among narrows the draw to these pitfalls (a class given a few);
	// none: every one the lab can run.
	Among []string `json:"among"`
}

// Start answers POST /api/mysteries: it draws a mystery and runs it.
func (s *Server) Start(w http.ResponseWriter, r *http.Request) {
	var req mysteryRequest
	if err := api.Decode(r, &req); err != nil {
		api.Fail(w, http.StatusBadRequest, `want {"quick": true|false, "by": "your name", "among": ["pitfall", ...]}: %v`, err)
		return
	}
	cs, err := among(s.candidates(r.Context()), req.Among)
	if err != nil {
		api.Fail(w, http.StatusBadRequest, "among: %v", err)
		return
	}
	pl, err := s.dice.draw(cs, s.find)
	if err != nil {
		api.Fail(w, http.StatusUnprocessableEntity, "no mystery to run: %v", err)
		return
	}
	m := &mystery{srv: s, plan: pl}
	if v, ok := s.cfg.Runs.Start(w, r, pl.Scenario, req.Quick, req.By, m); ok {
		api.WriteJSON(w, http.StatusAccepted, s.mysteryView(v, m))
	}
}

// mysteryRun is run id's view and its mystery, if it is one; else it
// answers 404 and returns a nil mystery.
func (s *Server) mysteryRun(w http.ResponseWriter, r *http.Request) (api.Run, *mystery) {
	v, sec, ok := s.cfg.Runs.Run(r.PathValue("id"))
	if m, isMystery := sec.(*mystery); ok && isMystery {
		return v, m
	}
	api.Fail(w, http.StatusNotFound, "run %s is no mystery among the current run and the last %d", r.PathValue("id"), s.cfg.Keep)
	return api.Run{}, nil
}

// Get answers GET /api/mysteries/{id}.
func (s *Server) Get(w http.ResponseWriter, r *http.Request) {
	if v, m := s.mysteryRun(w, r); m != nil {
		api.WriteJSON(w, http.StatusOK, s.mysteryView(v, m))
	}
}

type answerRequest struct {
	Pitfall string `json:"pitfall"`
}

// Answer answers POST /api/mysteries/{id}/answer: the reveal.
func (s *Server) Answer(w http.ResponseWriter, r *http.Request) {
	v, m := s.mysteryRun(w, r)
	if m == nil {
		return
	}
	var req answerRequest
	if err := api.Decode(r, &req); err != nil {
		api.Fail(w, http.StatusBadRequest, `want {"pitfall": NAME}: %v`, err)
		return
	}
	if !slices.ContainsFunc(s.choices(), func(c Choice) bool { return c.Pitfall == req.Pitfall }) {
		api.Fail(w, http.StatusBadRequest, "pitfall: %q is not one of the answers (GET /api/mysteries/%s lists them)", req.Pitfall, r.PathValue("id"))
		return
	}
	m.mu.Lock()
	if m.answer != "" {
		answer := m.answer
		m.mu.Unlock()
		api.Fail(w, http.StatusConflict, "mystery %s was answered already (%s): GET /api/mysteries/%s shows the reveal", r.PathValue("id"), answer, r.PathValue("id"))
		return
	}
	m.answer, m.answeredAt = req.Pitfall, time.Now().UTC()
	m.mu.Unlock()
	fmt.Fprintf(s.cfg.Log, "front: mystery %s answered %s; it was %s\n", r.PathValue("id"), req.Pitfall, m.plan.Base.Name)
	if answered, _, ok := s.cfg.Runs.Run(r.PathValue("id")); ok {
		v = answered // no longer withheld
	}
	api.WriteJSON(w, http.StatusOK, s.mysteryView(v, m))
}

// mysteryView is run, m's, as GET /api/mysteries/{id} shows it: the reveal
// only once answered.
func (s *Server) mysteryView(run api.Run, m *mystery) Mystery {
	out := Mystery{ID: run.ID, Run: run, Choices: s.choices()}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.answer == "" {
		return out
	}
	pl := m.plan
	ran := pl.Scenario
	if run.Quick {
		ran = scenario.Quick(ran)
	}
	e := api.EntryOf(ran)
	rv := &Reveal{Answer: m.answer, Correct: m.answer == pl.Base.Name, AnsweredAt: m.answeredAt,
		Ran: Ran{Pitfall: pl.Base.Name, Title: pl.Base.Title, Page: "docs/scenarios/" + pl.Base.Name + ".md",
			Targets: ran.Targets, Knobs: e.Changes.Knobs, Load: e.Changes.Load, DB: e.Changes.DB, Settings: pl.Settings,
			QuickFactor: ran.QuickFactor},
		Diagnosed: Diagnosed{Findings: slices.Clone(m.seen), Questions: m.questions},
		Panels:    []PanelLink{}}
	if rv.Diagnosed.Findings == nil {
		rv.Diagnosed.Findings = []Seen{}
	}
	if m.questions == 0 {
		rv.Diagnosed.Error = m.askErr
	}
	rv.Diagnosed.Named = slices.ContainsFunc(m.seen, func(f Seen) bool { return f.Pitfall == pl.Base.Name })
	// The board from a little before the run to a little after it: the
	// rates look back a minute, and the alerts fire after their for.
	from, to := run.StartedAt.Add(-30*time.Second), time.Time{}
	if run.EndedAt != nil {
		to = run.EndedAt.Add(time.Minute)
	}
	if s.cfg.Board != "" {
		rv.Board = rangeLink(s.cfg.Board, from, to)
	}
	for _, title := range append([]string{firingPanel}, pl.Base.Panels...) {
		if u := s.panelLink(title, from, to); u != "" {
			rv.Panels = append(rv.Panels, PanelLink{Title: title, URL: u})
		}
	}
	out.Reveal = rv
	return out
}

// Watch asks Prometheus what it sees while m's run runs: at its start,
// every mysteryPoll, and once after done is closed (it ended).
func (m *mystery) Watch(ctx context.Context, done <-chan struct{}) {
	tick := time.NewTicker(mysteryPoll)
	defer tick.Stop()
	for {
		m.noteDiagnosis(ctx)
		select {
		case <-done:
			m.noteDiagnosis(ctx)
			return
		case <-tick.C:
		}
	}
}

func (m *mystery) noteDiagnosis(ctx context.Context) {
	rep, err := m.srv.ask(ctx) // at shutdown: canceled, remembered as a failed question
	now := time.Now().UTC()
	var fs []Finding
	if err == nil {
		fs = m.srv.findings(rep.Findings, now)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.note(fs, err, now)
}

// unansweredMystery is the id of a mystery whose answer is still to come
// and that the pitfall alerts may still be naming: the run in progress, or
// the last one if it ended less than afterglow ago.
func (s *Server) unansweredMystery() (int, bool) {
	v, sec, _, ok := s.cfg.Runs.Last()
	if !ok || sec == nil || !sec.Hidden() || v.EndedAt != nil && time.Since(*v.EndedAt) > afterglow {
		return 0, false
	}
	return v.ID, true
}

// UnlessMysteryRunning answers 409 while a mystery runs unanswered: h
// would show what names it (the services' knobs in force; a change's
// answer carries them all) or change what it runs.
func (s *Server) UnlessMysteryRunning(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if v, sec, running, ok := s.cfg.Runs.Last(); ok && running && sec != nil && sec.Hidden() {
			api.Fail(w, http.StatusConflict, "a mystery is running (run %d): the knobs in force would name it, so they are held, and cannot be changed, until it ends", v.ID)
			return
		}
		h(w, r)
	}
}
