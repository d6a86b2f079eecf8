package attack

import (
	"context"
	"math/rand/v2"
	"net/netip"
	"net/url"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/failsafe-go/failsafe-go/adaptivethrottler"
)

// SpareFiles is how many open files a run needs besides its connections:
// standard streams, metric scrapes, the Go runtime.
const SpareFiles = 64

// Attack is one run in progress. Its Progress method may be called from
// any goroutine while Run runs.
type Attack struct {
	cfg    Config
	url    *url.URL
	srcs   []netip.Addr
	groups []*recorder
	runID  uint64

	started atomic.Int64 // unix nanoseconds; 0 until the run starts
	// sendUntil ends the window in which requests, retries included, may be
	// sent (closed and open runs with a Duration); zero: no end. Set before
	// the workers start.
	sendUntil time.Time
	// The run's shared client policy, under RetryBudget, RetryThrottle or
	// RetryTokenBucket.
	budget    permits
	throttler adaptivethrottler.AdaptiveThrottler[int]
	tokens    *tokenBucket
	sent      atomic.Int64
	answered  atomic.Int64
	errs      atomic.Int64
	rejected  atomic.Int64
	scratch   *Result // Progress's merge target, guarded by progMu
	progMu    sync.Mutex
}

// New checks cfg and the environment (open-files limit, source ports) and
// returns an Attack ready to run.
func New(cfg Config) (*Attack, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	u, _ := ParseURL(cfg.Target.URL, cfg.AllowRemote)
	if err := EnsureOpenFiles(cfg.Concurrency + SpareFiles); err != nil {
		return nil, err
	}
	// An open run's waiting workers each hold a timerfd besides their
	// connection; where the limit leaves no room for them, they wait with
	// time.Timer, at its millisecond resolution.
	if cfg.Mode == ModeOpen && EnsureOpenFiles(2*cfg.Concurrency+SpareFiles) != nil {
		cfg.timerWaits = true
	}
	var srcs []netip.Addr
	if ip, err := resolveLiteral(u.Hostname()); err == nil {
		if srcs, err = SourceAddrs(ip, cfg.Concurrency, EphemeralPorts()); err != nil {
			return nil, err
		}
	}
	n := min(cfg.Concurrency, 4*runtime.GOMAXPROCS(0))
	groups := make([]*recorder, n)
	for i := range groups {
		groups[i] = newRecorder()
	}
	a := &Attack{cfg: cfg, url: u, srcs: srcs, groups: groups, runID: rand.Uint64(), scratch: NewResult()}
	switch cfg.Retry {
	case RetryBudget:
		b, err := newRetryBudget()
		if err != nil {
			return nil, err
		}
		a.budget = b
	case RetryThrottle:
		a.throttler = newThrottler()
	case RetryTokenBucket:
		a.tokens = newTokenBucket(TokenBucketMax, TokenBucketRatio)
	}
	return a, nil
}

// resolveLiteral returns host's address when it is an IP literal or localhost.
func resolveLiteral(host string) (netip.Addr, error) {
	if host == "localhost" {
		return netip.AddrFrom4([4]byte{127, 0, 0, 1}), nil
	}
	a, err := netip.ParseAddr(host)
	return a.Unmap(), err
}

// Run performs the run and returns what it measured. When ctx is canceled
// it stops early and returns the partial result together with ctx's error.
func (a *Attack) Run(ctx context.Context) (*Result, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	tr := a.cfg.Transport
	if tr == nil {
		var err error
		tr, err = NewTransport(ctx, TransportConfig{
			Kind:        a.cfg.Client,
			Method:      a.cfg.Target.Method,
			URL:         a.url,
			Header:      a.cfg.Target.Header,
			Conns:       a.cfg.Concurrency,
			Timeout:     a.cfg.Timeout,
			SourceAddrs: a.srcs,
		})
		if err != nil {
			return nil, err
		}
		defer tr.Close()
	}

	var start time.Time
	switch a.cfg.Mode {
	case ModeBurst:
		start = a.burst(ctx, tr)
	case ModeClosed:
		start = a.closed(ctx, tr)
	case ModeOpen:
		start = a.open(ctx, tr)
	case ModeIdle:
		start = a.idle(ctx, tr)
	}
	res := NewResult()
	res.Mode = a.cfg.Mode
	var last time.Time
	for _, g := range a.groups {
		g.mu.Lock()
		res.Merge(g.res)
		if g.last.After(last) {
			last = g.last
		}
		g.mu.Unlock()
	}
	res.Started = start
	if last.After(start) {
		res.Elapsed = last.Sub(start)
	}
	if a.cfg.Mode == ModeOpen {
		res.Unsent = a.unsent(res, start, ctx.Err() != nil)
		res.Late += res.Unsent // they waited for a connection too, and never got one
	}
	return res, ctx.Err()
}

// unsent counts the requests of an open run that fell due and were neither
// sent nor canceled: those of its share of the schedule due within the
// window (or, when the run was interrupted, before it stopped) that were
// still waiting for a connection when the drain after the window gave up.
func (a *Attack) unsent(res *Result, start time.Time, interrupted bool) int64 {
	pacer, due := a.cfg.schedule()
	horizon := a.cfg.Duration
	if interrupted {
		// Only what fell due before the interruption, not the rest of the schedule.
		if e := time.Since(start); horizon <= 0 || e < horizon {
			horizon = e
		}
	}
	if horizon > 0 {
		if n := DueBefore(pacer, horizon); due == 0 || n < due {
			due = n
		}
	}
	return max(0, due-res.Sent-res.Canceled)
}

// Progress is a live view of a run.
type Progress struct {
	Elapsed  time.Duration
	Sent     int64
	Answered int64
	Errors   int64
	Rejected int64
	P99      time.Duration // corrected latency of successes so far
}

// Progress returns the run's figures so far. It merges the workers'
// histograms, so call it about once a second, not per request.
func (a *Attack) Progress() Progress {
	p := Progress{
		Sent:     a.sent.Load(),
		Answered: a.answered.Load(),
		Errors:   a.errs.Load(),
		Rejected: a.rejected.Load(),
	}
	if s := a.started.Load(); s != 0 {
		p.Elapsed = time.Since(time.Unix(0, s))
	}
	a.progMu.Lock()
	defer a.progMu.Unlock()
	a.scratch.Success.Reset()
	for _, g := range a.groups {
		g.mu.Lock()
		a.scratch.Success.Merge(g.res.Success)
		g.mu.Unlock()
	}
	p.P99 = time.Duration(a.scratch.Success.ValueAtQuantile(99)) * time.Microsecond
	return p
}

func (a *Attack) markStarted(t time.Time) { a.started.Store(t.UnixNano()) }

// released calls Config.OnRelease, if any.
func (a *Attack) released() {
	if a.cfg.OnRelease != nil {
		a.cfg.OnRelease()
	}
}
