//go:build composelab

package composelab

import (
	"cmp"
	"context"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/orderlab/orderlab/lab/diagnose"
)

// alertWatch asks the lab's Prometheus, every interval, which pitfall
// alerts are pending or firing (lab diagnose's client, diagnose.Read),
// and keeps each alert it saw: when it became active, when it was first
// seen firing, when last seen.
type alertWatch struct {
	every time.Duration
	stop  chan struct{}
	done  chan struct{}

	mu      sync.Mutex
	seen    map[alertKey]*alertSeen
	current map[alertKey]bool // those of the last answer
	polls   int
	errs    []time.Time // when an ask failed
	lastErr error
}

type alertKey struct {
	pitfall, service string
	since            time.Time
}

func watchAlerts(every time.Duration) *alertWatch {
	w := &alertWatch{every: every, stop: make(chan struct{}), done: make(chan struct{}), seen: map[alertKey]*alertSeen{}}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			w.poll()
			select {
			case <-w.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

func (w *alertWatch) poll() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := diagnose.Read(ctx, http.DefaultClient, prometheusURL)
	now := time.Now().UTC()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.polls++
	if err != nil {
		w.errs = append(w.errs, now)
		w.lastErr = err
		return
	}
	w.current = map[alertKey]bool{}
	record := func(f diagnose.Finding, firing bool) {
		k := alertKey{f.Pitfall, f.Service, f.Since}
		w.current[k] = true
		a := w.seen[k]
		if a == nil {
			a = &alertSeen{Pitfall: f.Pitfall, Service: f.Service, ActiveAt: f.Since, Evidence: f.Evidence}
			w.seen[k] = a
		}
		a.LastSeen = now
		if firing && a.Firing == nil {
			t := now
			a.Firing, a.Evidence = &t, f.Evidence
		}
	}
	for _, f := range r.Findings {
		record(f, true)
	}
	for _, f := range r.Pending {
		record(f, false)
	}
}

// active lists the alerts of the last answer on any of services (every
// service when none is named).
func (w *alertWatch) active(services ...string) []alertSeen {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []alertSeen
	for k := range w.current {
		if len(services) == 0 || slices.Contains(services, k.service) {
			out = append(out, *w.seen[k])
		}
	}
	return out
}

// close stops the asking and returns every alert seen, by when it became
// active, with the number of asks and when those that failed did.
func (w *alertWatch) close() (alerts []alertSeen, polls int, errs []time.Time, lastErr error) {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, a := range w.seen {
		alerts = append(alerts, *a)
	}
	slices.SortFunc(alerts, func(a, b alertSeen) int {
		return cmp.Or(a.ActiveAt.Compare(b.ActiveAt), cmp.Compare(a.Service, b.Service), cmp.Compare(a.Pitfall, b.Pitfall))
	})
	return alerts, w.polls, w.errs, w.lastErr
}
