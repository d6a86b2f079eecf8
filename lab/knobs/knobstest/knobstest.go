// Package knobstest is a loopback HTTP service for tests of knob clients:
// it serves GET/PATCH /knobs as the services' admin listener does
// (docs/lab-scenarios.md: all or nothing, 400 for a bad value or an unknown
// knob, 401 without and 403 with a wrong token, 409 for a restart-only
// knob), the gauge orderlab_knob_value{knob} on /metrics (set GaugeLag after
// each change, so that a client must wait for it), a value of "" puts a
// knob back as it started (source environment; the fake has no defaults
// and no knob that follows another), and answers every other
// path at once with 200 (201 for POST), as a stand-in for the API.
package knobstest

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Restart are the knobs the service refuses to change live (409).
var Restart = map[string]bool{"HTTP_SERVER": true, "HTTP_HANDLER_POOL": true}

// Service is one fake service. Its fields are read under its lock.
type Service struct {
	URL      string // serves both the API and the admin paths
	Token    string // "" makes PATCH answer 403 (read-only)
	GaugeLag time.Duration

	srv      *httptest.Server
	mu       sync.Mutex
	start    map[string]string // as the service started: "" puts a knob back to it
	values   map[string]string
	runtime  map[string]bool // set through PATCH (source runtime), not as at start
	gauges   map[string]float64
	patches  []map[string]string
	released int
	requests atomic.Int64
	// OnRequest, when set, is called on every API request (not /knobs, /metrics).
	OnRequest func(r *http.Request)
}

// New starts a service with these knobs and values; Close stops it.
func New(token string, values map[string]string) *Service {
	s := &Service{Token: token, start: maps.Clone(values), values: maps.Clone(values),
		runtime: map[string]bool{}, gauges: map[string]float64{}}
	for k, v := range values {
		if n, ok := number(v); ok {
			s.gauges[k] = n
		}
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// Close stops the service.
func (s *Service) Close() { s.srv.Close() }

// Values returns the knobs' current values.
func (s *Service) Values() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.values)
}

// Runtime names the knobs whose value was set through PATCH (GET /knobs's
// source runtime) and not put back with "".
func (s *Service) Runtime() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for k, rt := range s.runtime {
		if rt {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// Patches returns the PATCHes applied, in order.
func (s *Service) Patches() []map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.patches)
}

// Released counts the calls of POST /knobs/release-leaked.
func (s *Service) Released() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.released
}

// Requests counts the API requests served.
func (s *Service) Requests() int64 { return s.requests.Load() }

func (s *Service) serve(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/knobs" && r.Method == http.MethodGet:
		s.get(w)
	case r.URL.Path == "/knobs" && r.Method == http.MethodPatch:
		s.patch(w, r)
	case r.URL.Path == "/knobs/release-leaked" && r.Method == http.MethodPost:
		s.mu.Lock()
		s.released++
		s.mu.Unlock()
		_, _ = io.WriteString(w, `{"released": 3}`)
	case r.URL.Path == "/metrics":
		s.metrics(w)
	default:
		s.requests.Add(1)
		if s.OnRequest != nil {
			s.OnRequest(r)
		}
		_, _ = io.Copy(io.Discard, r.Body)
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusCreated)
		}
		_, _ = io.WriteString(w, "{}")
	}
}

func (s *Service) get(w http.ResponseWriter) {
	s.mu.Lock()
	out := s.view()
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// view is every knob as GET /knobs shows it; the caller holds the lock.
func (s *Service) view() map[string]any {
	out := map[string]any{}
	for k, v := range s.values {
		src := "environment"
		if s.runtime[k] {
			src = "runtime"
		}
		out[k] = map[string]any{"value": v, "live": !Restart[k], "source": src}
	}
	return out
}

func (s *Service) patch(w http.ResponseWriter, r *http.Request) {
	if s.Token == "" {
		http.Error(w, "read-only: set ADMIN_TOKEN to enable PATCH", http.StatusForbidden)
		return
	}
	auth, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		http.Error(w, "Authorization: Bearer <ADMIN_TOKEN> required", http.StatusUnauthorized)
		return
	}
	if auth != s.Token {
		http.Error(w, "wrong token", http.StatusForbidden)
		return
	}
	var set map[string]string
	if err := json.NewDecoder(r.Body).Decode(&set); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range slices.Sorted(maps.Keys(set)) {
		old, known := s.values[k]
		switch {
		case !known:
			http.Error(w, k+": unknown knob", http.StatusBadRequest)
			return
		case Restart[k] && set[k] != old:
			http.Error(w, k+": needs a restart", http.StatusConflict)
			return
		case !valid(old, set[k]):
			http.Error(w, fmt.Sprintf("%s: invalid value %q", k, set[k]), http.StatusBadRequest)
			return
		}
	}
	s.patches = append(s.patches, maps.Clone(set))
	gauges := map[string]float64{}
	for k, v := range set {
		s.values[k], s.runtime[k] = v, true
		if v == "" { // back as at start
			s.values[k], s.runtime[k] = s.start[k], false
		}
		if n, ok := number(s.values[k]); ok {
			gauges[k] = n
		}
	}
	apply := func() {
		s.mu.Lock()
		maps.Copy(s.gauges, gauges)
		s.mu.Unlock()
	}
	if s.GaugeLag > 0 {
		time.AfterFunc(s.GaugeLag, apply)
	} else {
		maps.Copy(s.gauges, gauges)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"knobs": s.view()})
}

func (s *Service) metrics(w http.ResponseWriter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	b.WriteString("# TYPE orderlab_knob_value gauge\n")
	for _, k := range slices.Sorted(maps.Keys(s.gauges)) {
		fmt.Fprintf(&b, "orderlab_knob_value{knob=%q} %v\n", k, s.gauges[k])
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	_, _ = io.WriteString(w, b.String())
}

// valid: a new value must be of the old one's kind (a whole number, a
// duration); a limit may also be "adaptive"; empty puts the knob back as
// at start.
func valid(old, v string) bool {
	if v == "" {
		return true
	}
	if v == "adaptive" || old == "adaptive" {
		_, err := strconv.Atoi(v)
		return err == nil || v == "adaptive"
	}
	if _, err := strconv.Atoi(old); err == nil {
		n, err := strconv.Atoi(v)
		return err == nil && n >= 0
	}
	if _, err := time.ParseDuration(old); err == nil {
		_, err := time.ParseDuration(v)
		return err == nil
	}
	return true
}

func number(v string) (float64, bool) {
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		return f, true
	}
	if d, err := time.ParseDuration(v); err == nil {
		return d.Seconds(), true
	}
	return 0, false
}
