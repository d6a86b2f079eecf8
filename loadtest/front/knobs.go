package front

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/orderlab/orderlab/loadtest/knobs"
)

// knobWait is how long a reset may take to show in GET /knobs and the
// knob gauges.
const knobWait = 15 * time.Second

// knobView is one knob of a service's GET /knobs, as far as the reset
// reads it; the page gets the service's whole answer.
type knobView struct {
	Value   string `json:"value"`
	Default string `json:"default"`
	Live    bool   `json:"live"`
}

// knobsJSON is a service's GET /knobs, as it wrote it.
func (s *Server) knobsJSON(ctx context.Context, service string) ([]byte, error) {
	c := &knobs.Client{Admin: s.cfg.Runner.Endpoints[service].AdminURL, HTTP: s.cfg.HTTP}
	return c.GetJSON(ctx)
}

// getKnobs answers every service's GET /knobs, or the error of one that
// did not answer.
func (s *Server) getKnobs(w http.ResponseWriter, r *http.Request) {
	type answer struct {
		Knobs json.RawMessage `json:"knobs,omitempty"`
		Error string          `json:"error,omitempty"`
	}
	out := map[string]answer{}
	for _, name := range s.services() {
		body, err := s.knobsJSON(r.Context(), name)
		if err == nil && !json.Valid(body) {
			err = errors.New("GET /knobs answered no JSON")
		}
		if err != nil {
			out[name] = answer{Error: err.Error()}
			continue
		}
		out[name] = answer{Knobs: body}
	}
	writeJSON(w, http.StatusOK, out)
}

// patchKnobs passes a change to the service's PATCH /knobs with the token,
// and its answer back as it came: the new knobs, or the refusal (400 for a
// bad value or an unknown knob, 409 for a restart-only one) with the
// service's reasons. The service applies all of a change or none.
func (s *Server) patchKnobs(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("service")
	ep, ok := s.cfg.Runner.Endpoints[name]
	if !ok {
		fail(w, http.StatusNotFound, "no service %q (have %s)", name, strings.Join(s.services(), ", "))
		return
	}
	var change map[string]string
	if err := decode(r, &change); err != nil || len(change) == 0 {
		fail(w, http.StatusBadRequest, `want a JSON object of knob to value, values as strings in the environment's syntax: {"DB_MAX_CONNS": "5"}`)
		return
	}
	body, _ := json.Marshal(change)
	u := strings.TrimRight(ep.AdminURL, "/") + "/knobs"
	req, err := http.NewRequestWithContext(r.Context(), http.MethodPatch, u, bytes.NewReader(body))
	if err != nil {
		fail(w, http.StatusInternalServerError, "%v", err)
		return
	}
	req.Header.Set("Content-Type", "application/json")
	if s.cfg.Runner.Token != "" {
		req.Header.Set("Authorization", "Bearer "+s.cfg.Runner.Token)
	}
	resp, err := s.cfg.HTTP.Do(req)
	if err != nil {
		fail(w, http.StatusBadGateway, "%s: %v", name, err)
		return
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	fmt.Fprintf(s.cfg.Log, "front: PATCH %s knobs %v from %s: %s\n", name, change, r.RemoteAddr, resp.Status)
	w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(answer)
}

// resetKnobs puts every live knob of every service back to its default
// (GET /knobs's "default"; a default that names another knob, as LIMIT's
// DB_MAX_CONNS, is that knob's default), one PATCH per service, and waits
// until each shows. It answers what it changed.
func (s *Server) resetKnobs(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	running, resetting := s.current != nil, s.resetting
	if !running && !resetting {
		s.resetting = true // a run started now would record half-reset knobs as the ones to put back
	}
	s.mu.Unlock()
	if running {
		fail(w, http.StatusConflict, "a run is in progress: it puts its knobs back when it ends (or stop it first)")
		return
	}
	if resetting {
		fail(w, http.StatusConflict, "a reset of the knobs is already under way")
		return
	}
	defer func() {
		s.mu.Lock()
		s.resetting = false
		s.mu.Unlock()
	}()
	changed := map[string]map[string]string{}
	var errs []string
	for _, name := range s.services() {
		diff, err := s.resetOne(r.Context(), name)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", name, err))
			continue
		}
		changed[name] = diff
	}
	fmt.Fprintf(s.cfg.Log, "front: knobs reset from %s: %v\n", r.RemoteAddr, changed)
	if len(errs) > 0 {
		writeJSON(w, http.StatusBadGateway, map[string]any{"error": strings.Join(errs, "; "), "changed": changed})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"changed": changed})
}

func (s *Server) resetOne(ctx context.Context, name string) (map[string]string, error) {
	body, err := s.knobsJSON(ctx, name)
	if err != nil {
		return nil, err
	}
	var view map[string]knobView
	if err := json.Unmarshal(body, &view); err != nil {
		return nil, fmt.Errorf("GET /knobs: %w", err)
	}
	diff := map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(view)) {
		v := view[k]
		if !v.Live {
			continue
		}
		def := v.Default
		for hops := 0; hops < 4; hops++ { // a default may name a knob whose default names another
			other, ok := view[def]
			if !ok {
				break
			}
			def = other.Default
		}
		if def == "" {
			continue
		}
		if !knobs.Same(v.Value, def) {
			diff[k] = def
		}
	}
	if len(diff) == 0 {
		return diff, nil
	}
	c := s.knobClient(name)
	if err := c.Patch(ctx, diff); err != nil {
		return nil, err
	}
	return diff, c.Wait(ctx, diff, knobWait)
}
