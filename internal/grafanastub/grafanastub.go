// Package grafanastub is a stand-in for Grafana where Grafana cannot run: it
// answers what the lab's other parts call (GET /api/health, the annotations
// loadtest and the front page write) and records the annotations, and every
// other page says that it is a stand-in, not Grafana. The e2e runs it in
// process; `make lab-test` runs it as the image grafana/grafana where that
// image cannot be pulled (.ci/labimages). It draws no board.
package grafanastub

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
)

// Notice is what every page that is not part of the API says.
const Notice = "This is not Grafana: it is orderlab's Grafana stand-in (internal/grafanastub), " +
	"which answers /api/health and records annotations, and draws no board."

// Call is one annotation request: a POST /api/annotations (ID is the id
// it was given) or a PATCH /api/annotations/{id}.
type Call struct {
	Method, ID, Auth string
	Body             map[string]any
}

// Stub is the stand-in's handler.
type Stub struct {
	mux   *http.ServeMux
	mu    sync.Mutex
	calls []Call
}

// New returns a stand-in with no annotations.
func New() *Stub {
	s := &Stub{mux: http.NewServeMux()}
	s.mux.HandleFunc("GET /api/health", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"database":"ok","version":"stand-in","notice":%q}`, Notice)
	})
	s.mux.HandleFunc("POST /api/annotations", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var a map[string]any
		if err := json.Unmarshal(body, &a); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		id := strconv.Itoa(len(s.calls) + 1)
		s.calls = append(s.calls, Call{Method: r.Method, ID: id, Auth: r.Header.Get("Authorization"), Body: a})
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":%s,"message":"Annotation added"}`, id)
	})
	s.mux.HandleFunc("PATCH /api/annotations/{id}", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var a map[string]any
		_ = json.Unmarshal(body, &a) // recorded as sent
		s.mu.Lock()
		s.calls = append(s.calls, Call{Method: r.Method, ID: r.PathValue("id"), Auth: r.Header.Get("Authorization"), Body: a})
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"message":"Annotation patched"}`)
	})
	s.mux.HandleFunc("GET /api/annotations", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(s.Calls())
	})
	s.mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintln(w, Notice)
	})
	return s
}

// ServeHTTP serves the stand-in; every answer carries the header
// X-Grafana-Stand-In.
func (s *Stub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Grafana-Stand-In", "true")
	s.mux.ServeHTTP(w, r)
}

// Calls returns the annotation requests so far, in order.
func (s *Stub) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}
