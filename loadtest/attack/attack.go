package attack

import (
	"context"
	"math"
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
	// The run's shared client policy, under RetryBudget or RetryThrottle.
	budget    permits
	throttler adaptivethrottler.AdaptiveThrottler[int]
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

// worker is one goroutine's state: its client, its recorder and scratch
// buffers for the request it is about to send.
type worker struct {
	a      *Attack
	client Client
	rec    *recorder
	rng    *rand.Rand
	req    Request
	id     uint64
	seq    uint64
	timer  *time.Timer
	// precise waits for an open run's due times (nil until the first wait,
	// and where the system has none).
	precise *preciseTimer
	tried   bool          // precise was asked for
	early   time.Duration // how early to wake: the median overshoot of past wakes
	// answered is when the worker's last request ended (zero before its first).
	answered time.Time
}

func (a *Attack) newWorker(id int, tr Transport) *worker {
	return &worker{
		a:      a,
		client: tr.NewClient(),
		rec:    a.groups[id%len(a.groups)],
		rng:    rand.New(rand.NewPCG(a.runID, uint64(id))),
		id:     uint64(id),
	}
}

func (w *worker) close() {
	_ = w.client.Close()
	if w.timer != nil {
		w.timer.Stop()
	}
	if w.precise != nil {
		w.precise.close()
	}
}

// prepare fills w.req for the next request: a fresh body and a unique
// Idempotency-Key ("lt-<run>-<worker>-<seq>") when the target has a body.
func (w *worker) prepare() {
	w.seq++
	if w.a.cfg.Target.Body == nil {
		return
	}
	w.req.Body = w.a.cfg.Target.Body(w.req.Body[:0], w.rng, w.seq)
	k := append(w.req.IdempotencyKey[:0], "lt-"...)
	k = appendHex(k, w.a.runID)
	k = append(k, '-')
	k = appendHex(k, w.id)
	k = append(k, '-')
	w.req.IdempotencyKey = appendHex(k, w.seq)
}

func appendHex(b []byte, v uint64) []byte {
	const digits = "0123456789abcdef"
	var tmp [16]byte
	i := len(tmp)
	for {
		i--
		tmp[i] = digits[v&0xf]
		v >>= 4
		if v == 0 {
			break
		}
	}
	return append(b, tmp[i:]...)
}

// fire sends one request that was due at due and records the outcome into
// rec. Refused connections are retried up to Config.Retries times, and so
// are 429 and 503 answers and attempts the client's throttler refused when
// Config.Retry says so, as long as the retry falls within the run's window
// (and, under RetryBudget, the budget allows); the outcome is the final
// attempt's, its latency runs from the first attempt.
//
// ready is when the generator meant to send it, for its lateness (zero: not
// recorded); see outcome.
func (w *worker) fire(ctx context.Context, rec *recorder, due, ready time.Time, late bool) {
	w.prepare()
	o := outcome{due: due, ready: ready, late: late}
	b := w.a.budget
	if b != nil {
		b.RecordExecution()
		defer b.ReleaseExecution()
	}
	budgeted := false // this attempt holds a permit of the retry budget
	for attempt := 0; ; attempt++ {
		sent := time.Now()
		if attempt == 0 {
			o.sent = sent
		}
		var resp Response
		if t := w.a.throttler; t != nil && !t.TryAcquirePermit() {
			resp, o.err = Response{}, errThrottled
			o.throttled++
		} else {
			resp, o.err = w.client.Do(&w.req)
			if t != nil {
				t.RecordResult(resp.Status)
			}
		}
		o.status = resp.Status
		if budgeted {
			b.ReleasePermit()
			budgeted = false
		}
		if attempt >= w.a.cfg.Retries || ctx.Err() != nil {
			break
		}
		wait, again := w.retryWait(resp, o.err, attempt)
		if !again || (!w.a.sendUntil.IsZero() && time.Now().Add(wait).After(w.a.sendUntil)) {
			break // no retry, or none before the run's window closes
		}
		if !w.sleep(ctx, wait) {
			break
		}
		// As failsafe-go's retry policy does: a rejection is retried only
		// with a permit of the budget, held for the retry's attempt.
		if b != nil && o.err == nil {
			if !b.TryAcquirePermit() {
				o.overBudget = true
				break // the budget is spent: the rejection stands
			}
			budgeted = true
		}
		o.retries++
	}
	o.done = time.Now()
	w.answered = o.done
	if o.err != nil && ctx.Err() != nil {
		o.canceled = true
	}
	rec.add(o)
	if rec != w.rec { // warm-up: not part of the live figures
		return
	}
	if o.canceled {
		return
	}
	w.a.sent.Add(1)
	switch {
	case o.err != nil:
		w.a.errs.Add(1)
	case IsRejection(o.status):
		w.a.answered.Add(1)
		w.a.rejected.Add(1)
	default:
		w.a.answered.Add(1)
	}
}

// retryWait says whether an attempt's outcome is sent again, and after how
// long: a refused connection, or an attempt its client's throttler refused,
// after a jittered backoff; a 429 or 503 as Config.Retry says.
func (w *worker) retryWait(resp Response, err error, attempt int) (time.Duration, bool) {
	switch {
	case err == errThrottled:
		return throttledWait(w, attempt), true
	case err != nil:
		return backoff(w.rng, attempt), Classify(err) == ErrRefused
	case !IsRejection(resp.Status):
		return 0, false
	}
	switch w.a.cfg.Retry {
	case RetryImmediate, RetryBudget, RetryThrottle:
		return 0, true
	case RetryHonor:
		return honor(w.rng, resp.RetryAfter, attempt, w.a.cfg.RetryMaxWait), true
	}
	return 0, false
}

// honor is a RetryHonor wait: Retry-After plus a uniform jitter of up to
// Retry-After again, at most max; without a Retry-After, a full-jitter
// exponential backoff from 100 ms, at most max.
func honor(r *rand.Rand, retryAfter time.Duration, attempt int, maxWait time.Duration) time.Duration {
	if maxWait <= 0 {
		maxWait = time.Duration(math.MaxInt64)
	}
	if retryAfter > 0 {
		return min(retryAfter+time.Duration(r.Float64()*float64(retryAfter)), maxWait)
	}
	ceiling := min(float64(100*time.Millisecond)*math.Pow(2, float64(attempt)), float64(maxWait))
	return time.Duration(r.Float64() * ceiling)
}

// backoff returns a full-jitter exponential delay: uniform in [0, 20ms·2^attempt], at most 1 s.
func backoff(r *rand.Rand, attempt int) time.Duration {
	ceiling := min(float64(20*time.Millisecond)*math.Pow(2, float64(attempt)), float64(time.Second))
	return time.Duration(r.Float64() * ceiling)
}
