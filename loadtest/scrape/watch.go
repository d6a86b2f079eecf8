package scrape

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/common/expfmt"
)

// Scraper reads one target's metrics endpoint.
type Scraper struct {
	URL    string       // e.g. http://127.0.0.1:9091/metrics
	Client *http.Client // nil: a client with a 2 s timeout
}

// defaultClient opens a connection per scrape: once a second costs nothing,
// and no idle connection outlives the run.
var defaultClient = &http.Client{
	Timeout:   2 * time.Second,
	Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil},
}

// Scrape reads the endpoint once, in the Prometheus text format.
func (s Scraper) Scrape(ctx context.Context) (Sample, error) {
	c := s.Client
	if c == nil {
		c = defaultClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
	if err != nil {
		return Sample{}, err
	}
	req.Header.Set("Accept", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
	at := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return Sample{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Sample{}, fmt.Errorf("%s: %s", s.URL, resp.Status)
	}
	return parse(resp.Body, expfmt.ResponseFormat(resp.Header), at)
}

// Watcher scrapes a target in the background. Make one with [Watch].
type Watcher struct {
	s      Scraper
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	series Series
}

// Watch scrapes s once now, then every interval until Stop.
func Watch(ctx context.Context, s Scraper, interval time.Duration) *Watcher {
	ctx, cancel := context.WithCancel(ctx)
	w := &Watcher{s: s, cancel: cancel, done: make(chan struct{}), series: Series{URL: s.URL}}
	w.scrape(ctx)
	go func() {
		defer close(w.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				w.scrape(ctx)
			}
		}
	}()
	return w
}

// Stop ends the watch with one last scrape and returns every sample.
func (w *Watcher) Stop(ctx context.Context) Series {
	w.cancel()
	<-w.done
	w.scrape(ctx)
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.series
}

func (w *Watcher) scrape(ctx context.Context) {
	s, err := w.s.Scrape(ctx)
	if err != nil && errors.Is(ctx.Err(), context.Canceled) {
		return // Stop interrupted it: not the target's failure, and Stop's own scrape follows
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.series.add(s, err)
}
