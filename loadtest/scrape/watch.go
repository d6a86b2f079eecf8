package scrape

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// Scraper reads one target's metrics endpoint.
type Scraper struct {
	URL string // e.g. http://127.0.0.1:9091/metrics
	// Also are the endpoints of the target's other replicas: every scrape
	// reads them all and sums their series (peaks are then of the sums).
	Also   []string
	Client *http.Client // nil: a client with a 2 s timeout
}

// defaultClient opens a connection per scrape: once a second costs nothing,
// and no idle connection outlives the run.
var defaultClient = &http.Client{
	Timeout:   2 * time.Second,
	Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil},
}

// Scrape reads the endpoint (and Also) once, in the Prometheus text format.
func (s Scraper) Scrape(ctx context.Context) (Sample, error) {
	at := time.Now()
	fams := make(map[string]*dto.MetricFamily)
	for _, u := range append([]string{s.URL}, s.Also...) {
		if err := s.read(ctx, u, fams); err != nil {
			return Sample{}, err
		}
	}
	return sampleOf(fams, at), nil
}

func (s Scraper) read(ctx context.Context, url string, fams map[string]*dto.MetricFamily) error {
	c := s.Client
	if c == nil {
		c = defaultClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return decode(resp.Body, expfmt.ResponseFormat(resp.Header), fams)
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
