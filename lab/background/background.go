// Package background is the lab's background load: a gentle, endless mix
// of requests (Mix) to each service, so that the board has data from the
// moment the lab is up (docs/lab.md, "Background load").
//
// Each target gets an open run at a constant rate, coordinated-omission
// correct like loadtest's open mode: a request is due at its time whatever
// happened to the ones before it, and its latency starts then. The run is
// cut into windows of Config.Window, each a loadtest open run of its own
// that starts on schedule even while the one before drains its last
// requests, so the schedule never waits for a slow service. Every request
// is counted as it ends in orderlab_background_requests_total, which the
// board draws as the background's share of the traffic, and carries the
// User-Agent "orderlab-background", which the services' server spans record.
package background

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/orderlab/orderlab/loadtest/attack"
	"github.com/orderlab/orderlab/loadtest/measure"
)

// UserAgent marks every request of the background load.
const UserAgent = "orderlab-background"

// Target is one service to load.
type Target struct {
	Name string // the service's Prometheus job: the job label of the counts
	URL  string // scheme and host, e.g. http://unbounded:8080
}

// Config is a background load.
type Config struct {
	Targets []Target
	// Rate is the requests per second sent to each target, over the whole
	// mix. It must be positive, unless Rates is set.
	Rate float64
	// Rates, when set, holds each target's rate instead of Rate, and may
	// change while Run runs (Rates.Set).
	Rates *Rates
	// Mix is what is sent; nil means Mix.
	Mix []Endpoint
	// Window is the length of each open run, and how often a summary is
	// logged per target; 0 means a minute.
	Window time.Duration
	// Conns bounds the connections to each target per window; 0 means 16.
	// When all are busy, due requests wait and count as late, from their
	// due time.
	Conns int
	// Timeout bounds each request; 0 means attack.Defaults'.
	Timeout     time.Duration
	AllowRemote bool // allow targets outside the loopback interface
	// Metrics, when set, is where orderlab_background_requests_total is
	// registered.
	Metrics prometheus.Registerer
	// Log receives a line per target and window, and a line when a target
	// cannot be reached at the start; nil discards them.
	Log io.Writer
}

// withDefaults checks c and fills in what it leaves to the defaults.
func (c Config) withDefaults() (Config, error) {
	if len(c.Targets) == 0 {
		return c, errors.New("no targets")
	}
	if c.Rates == nil {
		if !(c.Rate > 0) {
			return c, fmt.Errorf("rate %v: must be positive", c.Rate)
		}
		names := make([]string, len(c.Targets))
		for i, t := range c.Targets {
			names[i] = t.Name
		}
		c.Rates = NewRates(c.Rate, names...)
	}
	if c.Mix == nil {
		c.Mix = Mix
	}
	for _, e := range c.Mix {
		if e.Weight < 1 || (e.Method != "GET" && e.Method != "POST") || !strings.HasPrefix(e.Path, "/") {
			return c, fmt.Errorf("mix endpoint %+v: want GET or POST, a path from /, a weight of at least 1", e)
		}
	}
	if c.Window <= 0 {
		c.Window = time.Minute
	}
	if c.Conns <= 0 {
		c.Conns = 16
	}
	if c.Timeout <= 0 {
		c.Timeout = attack.Defaults(attack.ModeOpen).Timeout
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
	for _, t := range c.Targets {
		if t.Name == "" {
			return c, fmt.Errorf("target %q: no name", t.URL)
		}
		if _, err := attack.ParseURL(t.URL, c.AllowRemote); err != nil {
			return c, fmt.Errorf("target %s: %w", t.Name, err)
		}
	}
	return c, nil
}

// Run sends the load to every target until ctx is done. It returns an error
// only for a configuration it cannot run.
func Run(ctx context.Context, cfg Config) error {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return err
	}
	m := newMetrics(cfg.Metrics)
	log := &syncWriter{w: cfg.Log}
	var wg sync.WaitGroup
	for _, t := range cfg.Targets {
		m.target(t.Name, cfg.Mix)
		wg.Go(func() { load(ctx, cfg, t, m, log) })
	}
	wg.Wait()
	return nil
}

// load runs the windows of one target until ctx is done.
func load(ctx context.Context, cfg Config, t Target, m *metrics, log io.Writer) {
	base := strings.TrimRight(t.URL, "/")
	id, ok := createOrder(ctx, base, cfg.Timeout, t.Name, log)
	if !ok {
		return
	}
	mix := make([]Endpoint, len(cfg.Mix))
	for i, e := range cfg.Mix {
		e.Path = strings.ReplaceAll(e.Path, "{id}", id)
		mix[i] = e
	}
	tr, err := newMixTransport(ctx, base, mix, attack.TransportConfig{
		Kind:    attack.ClientFast,
		Header:  http.Header{"User-Agent": {UserAgent}},
		Conns:   cfg.Conns,
		Timeout: cfg.Timeout,
	}, func(e Endpoint, resp attack.Response, err error) { m.count(t.Name, e, resp, err) })
	if err != nil {
		fmt.Fprintf(log, "background: %s: %v\n", t.Name, err)
		return
	}
	defer tr.Close()

	run := attack.Defaults(attack.ModeOpen)
	run.Duration, run.Concurrency, run.Timeout = cfg.Window, cfg.Conns, cfg.Timeout
	run.Retries = 0 // a resend would go to the next endpoint of the mix
	run.Target = attack.Target{Method: "POST", URL: base + "/", Body: attack.OrderBody}
	run.Transport, run.AllowRemote = tr, true // the targets were checked in withDefaults

	var windows sync.WaitGroup
	defer windows.Wait()
	next := time.Now()
	for {
		rate, changed := cfg.Rates.get(t.Name)
		if rate == 0 { // off until the rate changes
			select {
			case <-ctx.Done():
				return
			case <-changed:
				next = time.Now()
				continue
			}
		}
		// The next window starts on schedule, not when the one before has
		// drained; a change of rate starts one at once.
		select {
		case <-ctx.Done():
			return
		case <-changed:
			next = time.Now()
			continue
		case <-time.After(time.Until(next)):
		}
		pacer := &stoppable{Pacer: attack.ConstantPacer{Rate: rate}, after: cfg.Window + time.Hour}
		window := run
		window.Pacer = pacer
		windows.Go(func() {
			a, err := attack.New(window)
			if err != nil {
				fmt.Fprintf(log, "background: %s: %v\n", t.Name, err)
				return
			}
			if res, err := a.Run(ctx); err == nil {
				fmt.Fprintf(log, "background: %s: %s\n", t.Name, summary(res))
			}
		})
		next = next.Add(cfg.Window)
		select {
		case <-ctx.Done():
			return
		case <-changed:
			pacer.Stop()
			next = time.Now()
		case <-time.After(time.Until(next)):
		}
	}
}

// summary is one window in a line.
func summary(r *attack.Result) string {
	ok, rejected := r.Success.TotalCount(), r.Rejected.TotalCount()
	failed := r.Failed.TotalCount() + r.ErrorCount() + r.Unsent
	p99 := time.Duration(r.Success.ValueAtQuantile(99)) * time.Microsecond
	return fmt.Sprintf("%d requests in %s: %d ok, %d rejected, %d failed, %d late; p99 of successes %s",
		r.Sent+r.Unsent, r.Elapsed.Round(time.Second), ok, rejected, failed, r.Late, p99)
}

// createOrder stores an order on the target for the mix's reads
// ("{id}"), retrying every two seconds until it succeeds or ctx is done. It
// says once when the target cannot be reached yet.
func createOrder(ctx context.Context, base string, timeout time.Duration, name string, log io.Writer) (string, bool) {
	hc := &http.Client{Timeout: timeout}
	rng := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	for said := false; ; {
		id, err := postOrder(ctx, hc, base, attack.OrderBody(nil, rng, 0))
		if err == nil {
			return id, true
		}
		if !said {
			fmt.Fprintf(log, "background: %s: waiting for the service: %v\n", name, err)
			said = true
		}
		if !measure.Sleep(ctx, 2*time.Second) {
			return "", false
		}
	}
}

// postOrder sends POST /orders and returns the stored order's id.
func postOrder(ctx context.Context, hc *http.Client, base string, body []byte) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/orders", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	resp, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		return "", fmt.Errorf("POST %s/orders: %s", base, resp.Status)
	}
	var order struct {
		ID json.Number `json:"id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&order); err != nil || order.ID == "" {
		return "", fmt.Errorf("POST %s/orders: no id in the answer (%v)", base, err)
	}
	return order.ID.String(), nil
}

// syncWriter serialises the lines of the targets' goroutines.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
