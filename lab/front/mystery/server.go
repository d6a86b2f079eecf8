// Package mystery is the front page's mystery mode and what the lab sees
// (docs/front-page.md): a pitfall of the catalog run with its knobs and load
// drawn at random, kept secret until it is answered (POST /api/mysteries,
// GET /api/mysteries/{id}, POST /api/mysteries/{id}/answer), and the pitfall
// alerts firing now (GET /api/diagnosis), which a mystery waiting for its
// answer holds back. lab/front serves its handlers and runs each mystery as
// one of its runs (Runs), holding its Secret beside the run.
package mystery

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"

	"github.com/orderlab/orderlab/lab/front/api"
	"github.com/orderlab/orderlab/lab/scenario"
	"github.com/orderlab/orderlab/lab/scenario/setup"
)

// Runs is what the front page lends mystery mode: its runs.
type Runs interface {
	// Start starts sc (quick: scenario.Quick of it) as the run in progress,
	// started by by (or someone at r's host) and kept secret by sec, and
	// returns its view; or answers w why it cannot start and returns false.
	Start(w http.ResponseWriter, r *http.Request, sc scenario.Scenario, quick bool, by string, sec Secret) (api.Run, bool)
	// Run is run id ("current" included) as GET /api/runs/{id} shows it,
	// and its secret (nil: none); false when it is neither the run in
	// progress nor one the page keeps.
	Run(id string) (api.Run, Secret, bool)
	// Last is the run in progress (running), or else the last one to end,
	// and its secret; false when there is none.
	Last() (v api.Run, sec Secret, running, ok bool)
}

// Secret is what a run keeps from the page until it is answered: a
// mystery's pitfall. The page holds it beside the run: while it is Hidden,
// the run's views are Withhold's and its report is refused; Watch runs
// beside the run from its start, and returns after done is closed (the run
// ended).
type Secret interface {
	Hidden() bool
	Withhold(api.Run) api.Run
	Watch(ctx context.Context, done <-chan struct{})
}

var _ Secret = (*mystery)(nil)

// Config is what mystery mode is given by the page.
type Config struct {
	Runs    Runs
	Catalog []scenario.Scenario // the page's: what a mystery draws from, and the answers' titles
	// Lab is where the page runs: a mystery runs only on its Endpoints, and
	// db-latency and db-restart only when its DBProxy answers.
	Lab setup.Lab
	// Board is the board's URL (the page's Runner.Board); "": no links.
	Board string
	// Prometheus is the base URL of the lab's Prometheus, asked what the
	// lab sees; HTTP asks it.
	Prometheus string
	HTTP       *http.Client
	Log        io.Writer // a line per answer
	Keep       int       // how many finished runs the page keeps
	// Rand draws the mysteries; nil: a source seeded at random.
	Rand *rand.Rand
}

// Server serves mystery mode and what the lab sees.
type Server struct {
	cfg    Config
	byName map[string]scenario.Scenario
	dice   dice
}

// New returns mystery mode on cfg, whose Runs, HTTP and Log are set.
func New(cfg Config) *Server {
	s := &Server{cfg: cfg, byName: map[string]scenario.Scenario{}, dice: dice{rng: cfg.Rand}}
	for _, sc := range cfg.Catalog {
		s.byName[sc.Name] = sc
	}
	return s
}

// find is the catalog's scenario name.
func (s *Server) find(name string) (scenario.Scenario, bool) {
	sc, ok := s.byName[name]
	return sc, ok
}
