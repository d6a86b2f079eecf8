// Package front is the lab's front page (docs/front-page.md): pick a
// scenario of the catalog, run it in the running lab, watch it, read its
// verdict, and change the services' knobs and the background load, from a
// browser. `lab front` serves it.
//
// Everything the page does goes through its JSON API under /api/, which
// curl can use as well:
//
//	GET    /api/config                the lab it drives: services, board, Prometheus
//	GET    /api/catalog               every scenario, with what it changes and expects
//	GET    /api/runs                  the run in progress (or null) and the last runs
//	POST   /api/runs                  {"scenario": NAME, "quick": bool, "by": NAME}: start a run
//	GET    /api/runs/{id}             one run: phase, time left, verdicts
//	POST   /api/runs/current/stop     stop the run in progress (its knobs are put back)
//	GET    /api/runs/{id}/report.html its report; report.json, its result
//	GET    /api/runs/{id}/series      live series from Prometheus over the run's range
//	GET    /api/runs/{id}/{file}      a flight recorder snapshot its report links
//	GET    /api/knobs                 every service's GET /knobs (409 while a mystery runs)
//	PATCH  /api/knobs/{service}       a change, passed to the service's PATCH /knobs (409 too)
//	POST   /api/knobs/reset           every knob changed at runtime back as the service started
//	GET    /api/background            the background load's rate per service
//	PUT    /api/background            {"unbounded": 4, ...}: change it (0 stops it)
//	GET    /api/diagnosis             what the lab sees: the pitfall alerts firing (lab diagnose)
//	POST   /api/mysteries             {"quick": bool, "by": NAME}: run a pitfall without naming it
//	GET    /api/mysteries/{id}        a mystery: its run, the answers to pick from; the reveal once answered
//	POST   /api/mysteries/{id}/answer {"pitfall": NAME}: answer it, and see what ran
//
// What the lab sees and mystery mode (the last four) are package mystery's
// (lab/front/mystery), which runs each mystery as one of this server's runs
// and holds back what names it; what the API answers (a run, a catalog
// entry, an error) is package api's (lab/front/api).
//
// One run at a time: a second start is answered 409 naming the run in
// progress, who started it and when it should end. A run belongs to the
// server, not to the page: it goes on when the page closes, and a page
// opened later shows it. Stop cancels the run's context, and the scenario
// runner puts back every knob it changed, as on Ctrl-C of `lab scenario
// -lab`. The admin token stays on the server: the browser never
// sees it. The server reaches only the services (their API and admin
// listeners), Prometheus, Grafana's annotation API and the background
// load's listener, and for the database scenarios the lab's database proxy
// (its control API) and the lab's Postgres (the keyed orders' check).
package front

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/orderlab/orderlab/lab/front/api"
	"github.com/orderlab/orderlab/lab/front/mystery"
	"github.com/orderlab/orderlab/lab/knobs"
	"github.com/orderlab/orderlab/lab/scenario"
	"github.com/orderlab/orderlab/lab/scenario/render"
	"github.com/orderlab/orderlab/lab/scenario/runner"
	"github.com/orderlab/orderlab/lab/scenario/setup"
	"github.com/orderlab/orderlab/loadtest/htmlreport"
)

// Config is what the page drives.
type Config struct {
	// Lab is where every run runs: the services' Endpoints (each with its
	// AdminURL), Token, DBProxy and AllowRemote, as `lab scenario -lab`
	// sets them.
	Lab setup.Lab
	// Runner is the template of every run: Annotate, Board and Out, as
	// `lab scenario -lab` sets them. Its Mode is Lab; Quick, Log and
	// Progress are set per run.
	Runner runner.Runner
	// Catalog is every scenario the page offers, in order.
	Catalog []scenario.Scenario
	// Prometheus is the base URL of the lab's Prometheus (query_range).
	Prometheus string
	// Grafana is Grafana's home as a browser opens it, for the page's links;
	// Runner.Board is the board.
	Grafana string
	// Background is the base URL of `lab background -listen`'s
	// listener (GET and PUT /rate); empty: the page has no background load
	// to change.
	Background string
	// Keep is how many finished runs keep their report (default 20); the
	// files of older ones are deleted.
	Keep int
	// Log receives a line per run started and ended, and each run's own log.
	Log io.Writer
	// HTTP is the client for the services, Prometheus and the background
	// load; nil: one with a 10 s timeout.
	HTTP *http.Client
}

// Server serves the page and its API. Close it: it stops a run in
// progress and waits until its knobs are back.
type Server struct {
	cfg     Config
	catalog []api.Entry
	mux     *http.ServeMux
	handler http.Handler // mux behind cross-origin protection

	mu        sync.Mutex
	seq       int
	current   *runState
	resetting bool        // a knob reset is under way: no run may start
	runs      []*runState // finished, oldest first
	mysteries *mystery.Server
	ctx       context.Context
	cancel    context.CancelFunc
	wg        sync.WaitGroup
}

// New checks cfg and returns the server.
func New(cfg Config) (*Server, error) { return newServer(cfg, nil) }

// newServer is New with the mysteries drawn from draws (nil: a source
// seeded at random).
func newServer(cfg Config, draws *rand.Rand) (*Server, error) {
	if len(cfg.Lab.Endpoints) == 0 {
		return nil, errors.New("front: no services (Lab.Endpoints)")
	}
	for name, ep := range cfg.Lab.Endpoints {
		if ep.AdminURL == "" {
			return nil, fmt.Errorf("front: %s has no admin listener (Endpoint.AdminURL)", name)
		}
	}
	if len(cfg.Catalog) == 0 {
		return nil, errors.New("front: an empty catalog")
	}
	if cfg.Runner.Out == "" {
		return nil, errors.New("front: no results directory (Runner.Out)")
	}
	if cfg.Keep <= 0 {
		cfg.Keep = 20
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if cfg.HTTP == nil {
		cfg.HTTP = &http.Client{Timeout: 10 * time.Second}
	}
	s := &Server{cfg: cfg, mux: http.NewServeMux()}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.mysteries = mystery.New(mystery.Config{Runs: mysteryRuns{s}, Catalog: cfg.Catalog, Lab: cfg.Lab, Board: cfg.Runner.Board,
		Prometheus: cfg.Prometheus, HTTP: cfg.HTTP, Log: cfg.Log, Keep: cfg.Keep, Rand: draws})
	for _, sc := range cfg.Catalog {
		s.catalog = append(s.catalog, api.EntryOf(sc))
	}
	s.routes()
	// The API takes no credential (the page is the lab's, on loopback), so
	// a page of another site must not be able to drive it from the user's
	// browser: a cross-site POST (a form or a text/plain fetch needs no
	// preflight) is refused by its Sec-Fetch-Site or Origin header; curl,
	// which sends neither, and the page itself pass.
	s.handler = http.NewCrossOriginProtection().Handler(s.mux)
	return s, nil
}

// ServeHTTP serves the page and the API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Close stops the run in progress, if any, and returns once the runner has
// put its knobs back and written its report.
func (s *Server) Close() {
	s.cancel()
	s.wg.Wait()
}

func (s *Server) routes() {
	m := s.mux
	static, _ := fs.Sub(assets, "assets")
	m.Handle("/", http.FileServerFS(static))
	m.HandleFunc("GET /echarts.min.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		w.Header().Set("Cache-Control", "max-age=86400")
		_, _ = io.WriteString(w, htmlreport.EChartsJS())
	})
	m.HandleFunc("GET /api/config", s.getConfig)
	m.HandleFunc("GET /api/catalog", func(w http.ResponseWriter, r *http.Request) { api.WriteJSON(w, http.StatusOK, s.catalog) })
	m.HandleFunc("GET /api/runs", s.listRuns)
	m.HandleFunc("POST /api/runs", s.startRun)
	m.HandleFunc("GET /api/runs/{id}", s.getRun)
	m.HandleFunc("POST /api/runs/current/stop", s.stopRun)
	m.HandleFunc("GET /api/runs/{id}/report.html", s.report(func(f render.Files, _ string) string { return f.HTML }))
	m.HandleFunc("GET /api/runs/{id}/report.json", s.report(func(f render.Files, _ string) string { return f.JSON }))
	m.HandleFunc("GET /api/runs/{id}/{file}", s.report(snapshotFile)) // what report.html links
	m.HandleFunc("GET /api/runs/{id}/series", s.series)
	m.HandleFunc("GET /api/knobs", s.mysteries.UnlessMysteryRunning(s.getKnobs))
	m.HandleFunc("PATCH /api/knobs/{service}", s.mysteries.UnlessMysteryRunning(s.patchKnobs))
	m.HandleFunc("POST /api/knobs/reset", s.resetKnobs)
	m.HandleFunc("GET /api/background", s.getBackground)
	m.HandleFunc("PUT /api/background", s.putBackground)
	m.HandleFunc("GET /api/diagnosis", s.mysteries.Diagnosis)
	m.HandleFunc("POST /api/mysteries", s.mysteries.Start)
	m.HandleFunc("GET /api/mysteries/{id}", s.mysteries.Get)
	m.HandleFunc("POST /api/mysteries/{id}/answer", s.mysteries.Answer)
	m.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		api.Fail(w, http.StatusNotFound, "no such API endpoint: %s %s (docs/front-page.md lists them)", r.Method, r.URL.Path)
	})
}

// services are the lab's services, sorted as the catalog names them.
func (s *Server) services() []string {
	names := slices.Collect(maps.Keys(s.cfg.Lab.Endpoints))
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), strings.Compare(a, b))
	})
	return names
}

func rank(name string) int {
	if i := slices.Index(scenario.Services, name); i >= 0 {
		return i
	}
	return len(scenario.Services)
}

func (s *Server) getConfig(w http.ResponseWriter, r *http.Request) {
	api.WriteJSON(w, http.StatusOK, map[string]any{
		"services":   s.services(),
		"board":      s.cfg.Runner.Board,
		"grafana":    s.cfg.Grafana,
		"background": s.cfg.Background != "",
		"keep":       s.cfg.Keep,
		"kinds":      scenario.Kinds,
	})
}

// find is the catalog's scenario name.
func (s *Server) find(name string) (scenario.Scenario, bool) {
	i := slices.IndexFunc(s.cfg.Catalog, func(sc scenario.Scenario) bool { return sc.Name == name })
	if i < 0 {
		return scenario.Scenario{}, false
	}
	return s.cfg.Catalog[i], true
}

func (s *Server) knobClient(name string) *knobs.Client {
	return &knobs.Client{Admin: s.cfg.Lab.Endpoints[name].AdminURL, Token: s.cfg.Lab.Token, HTTP: s.cfg.HTTP}
}

// remoteHost is the host of r's remote address, without its port: who
// started an unnamed run.
func remoteHost(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}
