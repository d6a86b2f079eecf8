package limiter

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// issuer is the permits that new requests get, with the mode it
// implements (the mode label of orderlab_limiter_limit).
type issuer struct {
	permits
	mode string
}

func newIssuer(cfg Config) (*issuer, error) {
	is, err := newPermits(cfg)
	if err != nil {
		return nil, err
	}
	if o, ok := is.permits.(ordered); ok {
		o.setOrder(cfg.NewestFirst)
	}
	return is, nil
}

// ordered is permits whose waiters can be served newest first.
type ordered interface{ setOrder(newestFirst bool) }

func newPermits(cfg Config) (*issuer, error) {
	if cfg.Adaptive && cfg.PoolWaits != nil {
		p, err := newPoolLimit(cfg)
		if err != nil {
			return nil, err
		}
		return &issuer{permits: p, mode: "adaptive"}, nil
	}
	if cfg.Adaptive {
		a, err := newAdaptive(cfg)
		if err != nil {
			return nil, err
		}
		return &issuer{permits: a, mode: "adaptive"}, nil
	}
	if cfg.Permits < 1 {
		return nil, fmt.Errorf("limiter: want at least one permit, got %d", cfg.Permits)
	}
	return &issuer{permits: newFixed(cfg.Permits), mode: "fixed"}, nil
}

// ValidateLimit checks a LIMIT as SetLimit does: adaptive, or at least one
// permit.
func ValidateLimit(permits int, adaptive bool) error {
	if !adaptive && permits < 1 {
		return fmt.Errorf("limiter: LIMIT must be at least 1 permit or adaptive, got %d", permits)
	}
	return nil
}

// ValidateBounds checks LIMIT_MIN and LIMIT_MAX as SetBounds does.
func ValidateBounds(lo, hi int) error {
	_, _, err := validBounds(lo, hi)
	return err
}

// SetLimit changes LIMIT live: a fixed number of permits, or the adaptive
// limit. A fixed limit is resized in place: a smaller one revokes no permit
// held and admits nobody until fewer than the new limit are held. A change
// of mode swaps in new permits for new requests; the permits held go back
// to the permits that issued them, so until they have, the requests in
// flight under the old mode are not counted against the new one. An
// unchanged limit changes nothing; a bad one is an error and changes
// nothing.
func (l *Limiter) SetLimit(permits int, adaptive bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	cur := l.cur.Load()
	if adaptive {
		if cur.mode == "adaptive" {
			return nil
		}
		cfg := l.cfg
		cfg.Adaptive = true
		return l.swap(cfg)
	}
	if err := ValidateLimit(permits, false); err != nil {
		return err
	}
	if f, ok := cur.permits.(*fixed); ok {
		f.resize(permits)
		l.cfg.Permits = permits
		return nil
	}
	cfg := l.cfg
	cfg.Adaptive, cfg.Permits = false, permits
	return l.swap(cfg)
}

// swap makes permits for cfg the issuer of new permits.
func (l *Limiter) swap(cfg Config) error {
	is, err := newIssuer(cfg)
	if err != nil {
		return err
	}
	l.cur.Store(is)
	l.cfg = cfg
	return nil
}

// SetWait changes LIMIT_WAIT live: the longest a request waits for a
// permit from now on (0 or below rejects at once). Requests already waiting
// keep the wait they began with.
func (l *Limiter) SetWait(d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	d = max(d, 0)
	l.wait.Store(int64(d))
	l.cfg.Wait = d
}

// SetOrder changes LIMIT_ORDER live: whether a freed permit goes to the
// request that began waiting last (newestFirst) or to the one that has
// waited longest. It applies to the requests waiting for the current
// permits now too; requests still waiting for the permits of a mode
// swapped out before (SetLimit, SetBounds) keep the order they began with.
func (l *Limiter) SetOrder(newestFirst bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cfg.NewestFirst = newestFirst
	if o, ok := l.cur.Load().permits.(ordered); ok {
		o.setOrder(newestFirst)
	}
}

// SetBounds changes LIMIT_MIN and LIMIT_MAX, the bounds of the adaptive
// limit. When the limit is adaptive now, a new adaptive limit with the new
// bounds takes over (it starts again from its initial limit, and the
// permits held go back to the old one); when it is fixed, the bounds apply
// at the next switch to adaptive. Bounds with min above max are an error
// and change nothing; unchanged bounds change nothing.
func (l *Limiter) SetBounds(lo, hi int) error {
	if err := ValidateBounds(lo, hi); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cfg.Min == lo && l.cfg.Max == hi {
		return nil
	}
	cfg := l.cfg
	cfg.Min, cfg.Max = lo, hi
	if l.cur.Load().mode != "adaptive" {
		l.cfg = cfg
		return nil
	}
	return l.swap(cfg)
}

// Config is the live configuration: what the setters last set.
func (l *Limiter) Config() Config {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cfg
}

// limitCollector exports orderlab_limiter_limit, the current limit with
// the current mode as its label: after a change of mode the series of the
// old mode ends and the new one's begins.
type limitCollector struct{ l *Limiter }

var limitDesc = prometheus.NewDesc("orderlab_limiter_limit",
	"The current limit on permits: LIMIT when fixed, the adaptive limit's current value when LIMIT=adaptive.",
	[]string{"mode"}, nil)

// signalDesc is what the pool-watching adaptive limit (poolwait.go) last
// decided on, exported while it is the limit: the share of the window's
// pool acquires that waited (it backs off above 0.02) and the window's
// mean hold over the baseline hold (it backs off above 1.5).
var signalDesc = prometheus.NewDesc("orderlab_limiter_signal",
	"What the adaptive limit on the pool decided on in its last window: signal=pool_wait_share, the share of pool acquires that waited (backs off above 0.02); signal=hold_vs_baseline, the mean permit hold over the baseline hold (backs off above 1.5; 0 with too few holds).",
	[]string{"signal"}, nil)

func (c limitCollector) Describe(ch chan<- *prometheus.Desc) { ch <- limitDesc; ch <- signalDesc }

func (c limitCollector) Collect(ch chan<- prometheus.Metric) {
	is := c.l.cur.Load()
	ch <- prometheus.MustNewConstMetric(limitDesc, prometheus.GaugeValue, float64(is.limit()), is.mode)
	p, ok := is.permits.(*poolLimit)
	if !ok {
		return
	}
	s := p.signals()
	ratio := 0.0
	if s.hold > 0 && s.base > 0 {
		ratio = float64(s.hold) / float64(s.base)
	}
	ch <- prometheus.MustNewConstMetric(signalDesc, prometheus.GaugeValue, s.waitShare, "pool_wait_share")
	ch <- prometheus.MustNewConstMetric(signalDesc, prometheus.GaugeValue, ratio, "hold_vs_baseline")
}
