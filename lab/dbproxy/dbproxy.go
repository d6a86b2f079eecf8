// Package dbproxy is the lab's database fault proxy: a TCP proxy between
// the services and Postgres (internal/faultproxy, toxiproxy in-process)
// with a small HTTP control API, so that `lab scenario -lab` can make
// the database's pitfalls in the running lab (docs/lab-scenarios.md).
//
//	GET /fault  -> {"fault": "none"}
//	PUT /fault  <- {"fault": "latency", "latency": "20ms"}  (added to each round trip, half each way)
//	               {"fault": "blackhole"} | {"fault": "reset"} | {"fault": "down"} | {"fault": "none"}
//
// down closes every connection and refuses new ones, as a stopped Postgres
// does. A fault replaces the one before it.
package dbproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/orderlab/orderlab/internal/faultproxy"
	"github.com/orderlab/orderlab/internal/httpjson"
)

// Fault is the proxy's state.
type Fault struct {
	Fault   string `json:"fault"`             // none, latency, blackhole, reset, down
	Latency string `json:"latency,omitempty"` // latency: a Go duration, per round trip
}

// Server controls one proxy. It is an http.Handler.
type Server struct {
	mu    sync.Mutex
	proxy *faultproxy.Proxy
	now   Fault
}

// NewServer controls p, which starts healthy.
func NewServer(p *faultproxy.Proxy) *Server { return &Server{proxy: p, now: Fault{Fault: "none"}} }

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/healthz" {
		_, _ = io.WriteString(w, "ok\n")
		return
	}
	if r.URL.Path != "/fault" {
		http.NotFound(w, r)
		return
	}
	switch r.Method {
	case http.MethodGet:
	case http.MethodPut:
		var f Fault
		if err := json.NewDecoder(io.LimitReader(r.Body, 4096)).Decode(&f); err != nil {
			http.Error(w, "want {\"fault\": ...}: "+err.Error(), http.StatusBadRequest)
			return
		}
		if err := s.set(f); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
	default:
		w.Header().Set("Allow", "GET, PUT")
		http.Error(w, "GET or PUT", http.StatusMethodNotAllowed)
		return
	}
	s.mu.Lock()
	now := s.now
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(now)
}

// set replaces the proxy's fault with f.
func (s *Server) set(f Fault) error {
	var d time.Duration
	switch f.Fault {
	case "none", "blackhole", "reset", "down":
		f.Latency = ""
	case "latency":
		var err error
		if d, err = time.ParseDuration(f.Latency); err != nil || d < 0 {
			return fmt.Errorf("latency %q: want a duration such as 20ms", f.Latency)
		}
	default:
		return fmt.Errorf("fault %q: want none, latency, blackhole, reset or down", f.Fault)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.proxy
	p.Clear()
	if err := p.Up(); err != nil {
		return err
	}
	var err error
	switch f.Fault {
	case "latency":
		err = p.Latency(d / 2)
	case "blackhole":
		err = p.Blackhole()
	case "reset":
		err = p.ResetPeer()
	case "down":
		p.Down()
	}
	if err != nil {
		p.Clear()
		s.now = Fault{Fault: "none"}
		return err
	}
	s.now = f
	return nil
}

// Client drives a Server.
type Client struct {
	URL  string // the control API's base, e.g. http://dbproxy:9090
	HTTP *http.Client
}

// Set replaces the proxy's fault.
func (c *Client) Set(ctx context.Context, f Fault) error {
	_, err := c.do(ctx, http.MethodPut, &f)
	return err
}

// Get returns the proxy's fault.
func (c *Client) Get(ctx context.Context) (Fault, error) {
	var f Fault
	a, err := c.do(ctx, http.MethodGet, nil)
	if err == nil {
		err = a.Decode(&f)
	}
	return f, err
}

// do sends f (nil: nothing) to /fault and returns the answer.
func (c *Client) do(ctx context.Context, method string, f *Fault) (httpjson.Answer, error) {
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 5 * time.Second}
	}
	var in any
	sent := ""
	if f != nil {
		in = f
		b, _ := json.Marshal(f)
		sent = string(b)
	}
	a, err := httpjson.Do(ctx, hc, method, strings.TrimRight(c.URL, "/")+"/fault", nil, in, 4096)
	if err != nil && a.Code == 0 {
		return a, fmt.Errorf("dbproxy: %w", err)
	}
	if a.Code != http.StatusOK {
		return a, fmt.Errorf("dbproxy: %s /fault %s: %s %s", method, sent, a.Status, bytes.TrimSpace(a.Body))
	}
	return a, nil
}
