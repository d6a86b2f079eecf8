package front

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/orderlab/orderlab/lab/front/api"
	"github.com/orderlab/orderlab/lab/knobs"
)

// knobWait is how long a reset may take to show in GET /knobs and the
// knob gauges.
const knobWait = 15 * time.Second

// knobsJSON is a service's GET /knobs, as it wrote it.
func (s *Server) knobsJSON(ctx context.Context, service string) ([]byte, error) {
	c := &knobs.Client{Admin: s.cfg.Lab.Endpoints[service].AdminURL, HTTP: s.cfg.HTTP}
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
	api.WriteJSON(w, http.StatusOK, out)
}

// patchKnobs passes a change to the service's PATCH /knobs with the token,
// and its answer back as it came: the new knobs, or the refusal (400 for a
// bad value or an unknown knob, 409 for a restart-only one) with the
// service's reasons. The service applies all of a change or none.
func (s *Server) patchKnobs(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("service")
	ep, ok := s.cfg.Lab.Endpoints[name]
	if !ok {
		api.Fail(w, http.StatusNotFound, "no service %q (have %s)", name, strings.Join(s.services(), ", "))
		return
	}
	var change map[string]string
	if err := api.Decode(r, &change); err != nil || len(change) == 0 {
		api.Fail(w, http.StatusBadRequest, `want a JSON object of knob to value, values as strings in the environment's syntax: {"DB_MAX_CONNS": "5"}`)
		return
	}
	body, _ := json.Marshal(change)
	u := strings.TrimRight(ep.AdminURL, "/") + "/knobs"
	req, err := http.NewRequestWithContext(r.Context(), http.MethodPatch, u, bytes.NewReader(body))
	if err != nil {
		api.Fail(w, http.StatusInternalServerError, "%v", err)
		return
	}
	req.Header.Set("Content-Type", "application/json")
	if s.cfg.Lab.Token != "" {
		req.Header.Set("Authorization", "Bearer "+s.cfg.Lab.Token)
	}
	resp, err := s.cfg.HTTP.Do(req)
	if err != nil {
		api.Fail(w, http.StatusBadGateway, "%s: %v", name, err)
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

// resetKnobs puts every knob changed at runtime on every service back as
// the service started (a PATCH of "" each: its environment value or its
// default, and a knob that follows DB_MAX_CONNS follows it again), one
// PATCH per service, and waits until each shows. It answers what it
// changed, with the values they went back to.
func (s *Server) resetKnobs(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	running, resetting := s.current != nil, s.resetting
	if !running && !resetting {
		s.resetting = true // a run started now would record half-reset knobs as the ones to put back
	}
	s.mu.Unlock()
	if running {
		api.Fail(w, http.StatusConflict, "a run is in progress: it puts its knobs back when it ends (or stop it first)")
		return
	}
	if resetting {
		api.Fail(w, http.StatusConflict, "a reset of the knobs is already under way")
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
		api.WriteJSON(w, http.StatusBadGateway, map[string]any{"error": strings.Join(errs, "; "), "changed": changed})
		return
	}
	api.WriteJSON(w, http.StatusOK, map[string]any{"changed": changed})
}

func (s *Server) resetOne(ctx context.Context, name string) (map[string]string, error) {
	c := s.knobClient(name)
	have, err := c.Knobs(ctx)
	if err != nil {
		return nil, err
	}
	back := map[string]string{}
	for k, v := range have {
		if v.Source == "runtime" {
			back[k] = ""
		}
	}
	if len(back) == 0 {
		return back, nil
	}
	after, err := c.Patch(ctx, back)
	if err != nil {
		return nil, err
	}
	for k := range back {
		back[k] = after[k].Value
	}
	return back, c.Wait(ctx, back, knobWait)
}
