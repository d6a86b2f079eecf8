package attack

import (
	"context"
	"math"
	"math/rand/v2"
	"time"
)

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
// (and, under RetryBudget or RetryTokenBucket, the budget allows); the outcome is the final
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
			w.req.Attempt = attempt
			resp, o.err = w.client.Do(&w.req)
			if t != nil {
				t.RecordResult(resp.Status)
			}
		}
		o.status = resp.Status
		resendable := true // as far as the token bucket is concerned
		if tb := w.a.tokens; tb != nil && o.err == nil {
			switch {
			case IsRejection(resp.Status):
				resendable = tb.failed()
			case resp.Status < 400:
				tb.succeeded()
			}
		}
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
		if !resendable {
			o.overBudget = true
			break // the bucket is at half or below: the rejection stands
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
	case RetryImmediate, RetryBudget, RetryThrottle, RetryTokenBucket:
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
