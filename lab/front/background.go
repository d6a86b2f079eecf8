package front

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/orderlab/orderlab/lab/front/api"
)

// getBackground answers the background load's GET /rate: requests per
// second to each service.
func (s *Server) getBackground(w http.ResponseWriter, r *http.Request) {
	s.background(w, r, http.MethodGet, nil)
}

// putBackground passes {"service": rate, ...} to the background load's PUT
// /rate with the token; its refusal comes back as it came.
func (s *Server) putBackground(w http.ResponseWriter, r *http.Request) {
	var set map[string]float64
	if err := api.Decode(r, &set); err != nil || len(set) == 0 {
		api.Fail(w, http.StatusBadRequest, `want a JSON object of service to requests per second (0: off): {"unbounded": 4}`)
		return
	}
	body, _ := json.Marshal(set)
	s.background(w, r, http.MethodPut, body)
}

func (s *Server) background(w http.ResponseWriter, r *http.Request, method string, body []byte) {
	if s.cfg.Background == "" {
		api.Fail(w, http.StatusNotFound, "no background load known to the page (lab front -background URL)")
		return
	}
	req, err := http.NewRequestWithContext(r.Context(), method, strings.TrimRight(s.cfg.Background, "/")+"/rate", bytes.NewReader(body))
	if err != nil {
		api.Fail(w, http.StatusInternalServerError, "%v", err)
		return
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
		if s.cfg.Lab.Token != "" {
			req.Header.Set("Authorization", "Bearer "+s.cfg.Lab.Token)
		}
	}
	resp, err := s.cfg.HTTP.Do(req)
	if err != nil {
		api.Fail(w, http.StatusBadGateway, "the background load: %v", err)
		return
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if body != nil {
		fmt.Fprintf(s.cfg.Log, "front: background rate %s from %s: %s\n", body, r.RemoteAddr, resp.Status)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(answer)
}
