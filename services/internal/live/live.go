// Package live owns what changes in a running service (docs/reference/knobs.md):
// the knobs in force and their coordinator (Live), the knob API on the
// admin listener (knobs_http.go), how the shared parts follow their knobs
// (parts.go), and the model in use, rebuilt when its own knobs change
// (model.go) and swapped through the one swap of generations that the
// pool uses too (live/swap).
package live

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/orderlab/orderlab/services/internal/knob"
)

// Live holds the running service's knobs and applies changes to its parts
// (docs/reference/knobs.md). Changes are serialised by one mutex; each part
// registers, with On, what it does when its knobs change.
type Live struct {
	mu     sync.Mutex // serialises Change and Close
	cur    atomic.Pointer[knob.Set]
	hooks  []hook
	closed bool
	log    *slog.Logger

	changes *prometheus.CounterVec
}

// A hook applies the knobs it names to one part. check, when set, refuses
// a value that the declarations allow but the running part cannot take.
type hook struct {
	names []string
	check func(next *knob.Set) error
	apply func(ctx context.Context, next *knob.Set) error
}

// ErrShuttingDown refuses a change once shutdown has begun.
var ErrShuttingDown = errors.New("the service is shutting down; knobs no longer change")

// ApplyError is a change a part failed to apply: the parts changed before
// it were set back.
type ApplyError struct {
	Knobs []string
	Err   error
}

func (e *ApplyError) Error() string { return fmt.Sprintf("applying %v: %v", e.Knobs, e.Err) }
func (e *ApplyError) Unwrap() error { return e.Err }

// applyTimeout bounds one part's change (a pool swap opens connections).
const applyTimeout = 10 * time.Second

// New returns the coordinator of the knobs s, with its metrics on reg.
func New(s *knob.Set, log *slog.Logger, reg prometheus.Registerer) (*Live, error) {
	l := &Live{log: log, changes: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "orderlab_knob_changes_total",
		Help: "Changes of a knob through PATCH /knobs (docs/reference/knobs.md).",
	}, []string{"knob"})}
	l.cur.Store(s)
	for _, k := range s.Knobs() {
		if k.Live {
			l.changes.WithLabelValues(k.Name) // 0 from the start: changes() sees the first
		}
	}
	if err := reg.Register(l.changes); err != nil {
		return nil, err
	}
	if err := reg.Register(valueCollector{l}); err != nil {
		return nil, err
	}
	return l, nil
}

// On registers apply for changes to any of names. apply gets the whole
// next set and must be idempotent for the knobs that did not change.
func (l *Live) On(apply func(ctx context.Context, next *knob.Set) error, names ...string) {
	l.hooks = append(l.hooks, hook{names: names, apply: apply})
}

// Check registers a refusal of values a running part cannot take.
func (l *Live) Check(check func(next *knob.Set) error, names ...string) {
	l.hooks = append(l.hooks, hook{names: names, check: check})
}

// Current is the set in force.
func (l *Live) Current() *knob.Set { return l.cur.Load() }

// Change applies changes (knob name to value, in the environment's syntax)
// all or nothing: a *knob.ChangeError when a value is refused, an
// *ApplyError when a part failed (the others set back), ErrShuttingDown
// after Close. It returns the knobs whose value changed.
func (l *Live) Change(changes map[string]string, remote string) ([]string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, ErrShuttingDown
	}
	prev := l.cur.Load()
	next, changed, err := prev.With(changes)
	if err != nil {
		return nil, err
	}
	var invalid []*knob.Error
	for _, h := range l.hooks {
		if h.check == nil || !touches(h, changed) {
			continue
		}
		if err := h.check(next); err != nil {
			var ke *knob.Error
			if !errors.As(err, &ke) {
				ke = &knob.Error{Knob: h.names[0], Reason: err.Error()}
			}
			invalid = append(invalid, ke)
		}
	}
	if len(invalid) > 0 {
		return nil, &knob.ChangeError{Invalid: invalid}
	}
	var done []hook
	for _, h := range l.hooks {
		if h.apply == nil || !touches(h, changed) {
			continue
		}
		if err := l.run(h, next); err != nil {
			for _, d := range slices.Backward(done) {
				if rerr := l.run(d, prev); rerr != nil {
					l.log.Error("knob change: setting back failed", "knobs", d.names, "err", rerr)
				}
			}
			return nil, &ApplyError{Knobs: h.names, Err: err}
		}
		done = append(done, h)
	}
	l.cur.Store(next)
	for _, name := range changed {
		k, _ := knob.Lookup(name)
		o, _, _ := prev.Get(name)
		n, _, _ := next.Get(name)
		l.changes.WithLabelValues(name).Inc()
		l.log.Info("knob changed", "knob", name, "old", k.Show(o), "new", k.Show(n), "remote_addr", remote)
	}
	return changed, nil
}

func (l *Live) run(h hook, s *knob.Set) error {
	ctx, cancel := context.WithTimeout(context.Background(), applyTimeout)
	defer cancel()
	return h.apply(ctx, s)
}

// Close refuses every later change; it waits for one in progress.
func (l *Live) Close() {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
}

func touches(h hook, changed []string) bool {
	for _, n := range h.names {
		if slices.Contains(changed, n) {
			return true
		}
	}
	return false
}

// valueCollector exports orderlab_knob_value at scrape time from the set
// in force: every knob with a number (durations in seconds, booleans 0/1).
type valueCollector struct{ l *Live }

var knobValueDesc = prometheus.NewDesc("orderlab_knob_value",
	"Value of a numeric knob in force (durations in seconds, booleans 0/1; docs/reference/knobs.md).",
	[]string{"knob"}, nil)

func (c valueCollector) Describe(ch chan<- *prometheus.Desc) { ch <- knobValueDesc }

func (c valueCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.l.Current()
	for _, k := range s.Knobs() {
		v, _, _ := s.Get(k.Name)
		if f, ok := k.Numeric(v); ok {
			ch <- prometheus.MustNewConstMetric(knobValueDesc, prometheus.GaugeValue, f, k.Name)
		}
	}
}
