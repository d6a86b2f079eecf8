package background

import (
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/orderlab/orderlab/loadtest/attack"
)

// MaxRate is the most requests per second a target may be given.
const MaxRate = 10000

// Rates are the live rate of each target: Set changes them while Run runs
// (the background's control endpoint, PUT /rate). A change takes effect at
// once: the window running stops scheduling, and a new one starts at the
// new rate (0: none, until the rate rises again). It is safe for
// concurrent use.
type Rates struct {
	mu   sync.Mutex
	rate map[string]float64
	wake map[string]chan struct{} // closed on a change of that target's rate
}

// NewRates gives each named target rate.
func NewRates(rate float64, names ...string) *Rates {
	r := &Rates{rate: map[string]float64{}, wake: map[string]chan struct{}{}}
	for _, n := range names {
		r.rate[n], r.wake[n] = rate, make(chan struct{})
	}
	return r
}

// All returns every target's rate.
func (r *Rates) All() map[string]float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.rate)
}

// get returns a target's rate and a channel closed at its next change.
func (r *Rates) get(name string) (float64, <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rate[name], r.wake[name]
}

// Set changes the rates named in set, all or none: an unknown target or a
// rate outside 0..MaxRate changes nothing.
func (r *Rates) Set(set map[string]float64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, name := range slices.Sorted(maps.Keys(set)) {
		if _, ok := r.rate[name]; !ok {
			return fmt.Errorf("no target %q (have %v)", name, slices.Sorted(maps.Keys(r.rate)))
		}
		if v := set[name]; !(v >= 0 && v <= MaxRate) { // NaN compares false
			return fmt.Errorf("%s: rate %v: want 0 (off) to %d requests per second", name, v, MaxRate)
		}
	}
	for name, v := range set {
		if v == r.rate[name] {
			continue
		}
		r.rate[name] = v
		close(r.wake[name])
		r.wake[name] = make(chan struct{})
	}
	return nil
}

// stoppable is a window's schedule that Stop ends: every request not yet
// taken is then due after the window, so the workers send no more (the
// ones in flight finish and are counted as usual).
type stoppable struct {
	attack.Pacer
	after   time.Duration // past the window's end
	stopped atomic.Bool
}

func (s *stoppable) Due(i int64) time.Duration {
	if s.stopped.Load() {
		return s.after
	}
	return s.Pacer.Due(i)
}

func (s *stoppable) Stop() { s.stopped.Store(true) }

// Handler serves the rates: GET /rate for everyone who reaches the
// listener, PUT /rate {"name": rate, ...} with the bearer token only (all
// or none of a change is applied), as the services guard PATCH /knobs.
// Without a token the rates are read-only. log gets a line per change.
func (r *Rates) Handler(token string, log io.Writer) http.Handler {
	answer := func(w http.ResponseWriter, status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	refuse := func(w http.ResponseWriter, status int, msg string) {
		answer(w, status, map[string]string{"error": msg})
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /rate", func(w http.ResponseWriter, req *http.Request) { answer(w, http.StatusOK, r.All()) })
	mux.HandleFunc("PUT /rate", func(w http.ResponseWriter, req *http.Request) {
		if token == "" {
			refuse(w, http.StatusForbidden, "the background load was started without ADMIN_TOKEN: its rates are read-only")
			return
		}
		got, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
			refuse(w, http.StatusUnauthorized, "changing the rates needs Authorization: Bearer <ADMIN_TOKEN>")
			return
		}
		var set map[string]float64
		if err := json.NewDecoder(http.MaxBytesReader(w, req.Body, 4096)).Decode(&set); err != nil || len(set) == 0 {
			refuse(w, http.StatusBadRequest, `want a JSON object of target to requests per second: {"unbounded": 4}`)
			return
		}
		if err := r.Set(set); err != nil {
			refuse(w, http.StatusBadRequest, "nothing was changed: "+err.Error())
			return
		}
		if log != nil {
			fmt.Fprintf(log, "background: rates now %v (from %s)\n", r.All(), req.RemoteAddr)
		}
		answer(w, http.StatusOK, r.All())
	})
	return mux
}
