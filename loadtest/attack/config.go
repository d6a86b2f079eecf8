package attack

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// Mode is the shape of a run.
type Mode string

// The modes.
const (
	// ModeBurst releases Concurrency requests at the same instant, after a
	// warm-up round that opens the connections, and measures the time until
	// the last answer.
	ModeBurst Mode = "burst"
	// ModeClosed runs Concurrency workers, each sending its next request as
	// soon as the previous one is answered (like wrk -c). Its latencies
	// hide queueing: a slow answer delays the requests behind it.
	ModeClosed Mode = "closed"
	// ModeOpen sends requests at the times a Pacer gives, independent of
	// the answers, on at most Concurrency connections.
	ModeOpen Mode = "open"
	// ModeIdle opens Concurrency keep-alive connections with one request
	// each and holds them open, idle, for Duration: what an idle
	// connection costs the server.
	ModeIdle Mode = "idle"
)

// RetryPolicy is what a worker does with a 429 or 503 answer.
type RetryPolicy string

// The retry policies.
const (
	// RetryNone counts the answer and moves on: in a closed run the
	// worker's next request is a new one, sent at once.
	RetryNone RetryPolicy = "none"
	// RetryImmediate sends the same request again at once, up to Retries
	// times: the retry storm of naive clients.
	RetryImmediate RetryPolicy = "immediate"
	// RetryHonor waits what the answer's Retry-After asks, plus a uniform
	// jitter of up to as much again (so that the clients turned away in
	// the same second do not all come back in the same second), at most
	// RetryMaxWait, then sends the same request again, up to Retries times.
	// Without a Retry-After it backs off exponentially with full jitter.
	RetryHonor RetryPolicy = "honor"
	// RetryBudget sends a 429 or 503 again at once, as RetryImmediate does,
	// but only while the run's retry budget allows (failsafe-go's budget:
	// retries at most RetryBudgetRate of the requests in flight); beyond
	// it the rejection stands.
	RetryBudget RetryPolicy = "budget"
	// RetryThrottle puts every attempt through the run's adaptive throttler
	// (failsafe-go's, the Google SRE book's client-side throttling): once
	// the server accepts too few of the recent requests, attempts are
	// refused in the client, unsent, with a rising probability, and tried
	// again after a full-jitter backoff; a 429 or 503 is sent again at once
	// through the throttler. Up to Retries times either way.
	RetryThrottle RetryPolicy = "throttle"
	// RetryTokenBucket sends a 429 or 503 again at once, as RetryImmediate
	// does, but only while the run's token bucket allows: gRPC's retry
	// throttling (tokenbucket.go). Every rejection takes a token, every
	// success gives back TokenBucketRatio of one, and a rejection is
	// resent only while more than half of TokenBucketMax is left; beyond
	// it the rejection stands. Where RetryBudget counts retries in flight,
	// this counts failures against successes over the run.
	RetryTokenBucket RetryPolicy = "token-bucket"
)

// RetryPolicies lists every policy, in the order the docs give them.
var RetryPolicies = []RetryPolicy{RetryNone, RetryImmediate, RetryHonor, RetryBudget, RetryThrottle, RetryTokenBucket}

// Config describes one run against one target.
type Config struct {
	Mode   Mode
	Target Target
	// Concurrency is the number of workers, each with its own connection.
	// Burst: the number of requests. Open: the most connections opened;
	// the pool grows on demand up to it.
	Concurrency int
	Requests    int64         // closed, open: stop after this many requests (0: no bound)
	Duration    time.Duration // closed: send no request after this long; open: the window requests fall due in (0: no bound); idle: the hold
	Pacer       Pacer         // open: when each request is due
	// Shard, in an open run, sends only this generator's share of the
	// Pacer's schedule (and of Requests, which bounds the whole schedule).
	// The zero Shard sends it all.
	Shard Shard
	// Timeout bounds each request (0: none). In an open run it also
	// bounds the drain after Duration: requests due within the window but
	// still waiting for a connection are sent for at most Timeout after it.
	Timeout time.Duration
	// Retries is the most times one request is sent again: after a
	// refused connection (with jittered backoff), after a 429 or 503 under
	// a Retry other than RetryNone, and after its client's throttler
	// refused it (RetryThrottle). Its latency runs from the
	// first attempt's intended send time to the final answer.
	Retries int
	// Retry is what a worker does with a 429 or 503 answer; "" is RetryNone.
	Retry RetryPolicy
	// RetryMaxWait caps one RetryHonor wait.
	RetryMaxWait time.Duration
	Warmup       bool       // burst: an untimed round of the same size first
	Client       ClientKind // default ClientFast
	AllowRemote  bool       // allow targets outside the loopback interface
	// Transport, when set, replaces the HTTP client Client names, e.g.
	// a ClientFunc-based fake in tests. Run does not close it.
	Transport Transport
	// OnRelease, when set, is called once, just before the measured
	// requests start: in a burst after the warm-up round, in closed and open
	// runs before the first request. It is where a caller takes its
	// baseline (a metrics scrape, an annotation) so that the warm-up is not
	// part of it. It runs on Run's goroutine; the measured time starts after
	// it returns.
	OnRelease func()

	// timerWaits makes open runs wait with time.Timer, which a
	// testing/synctest bubble's virtual clock drives, instead of the
	// kernel's timer, which it does not (tests; and runs whose open-files
	// limit leaves no room for the kernel's timers).
	timerWaits bool
}

// Validate reports the first problem with c, naming the setting.
func (c Config) Validate() error {
	switch c.Mode {
	case ModeBurst, ModeClosed, ModeOpen, ModeIdle:
	default:
		return fmt.Errorf("mode %q: want burst, closed, open or idle", c.Mode)
	}
	if c.Concurrency < 1 {
		return fmt.Errorf("concurrency %d: must be at least 1", c.Concurrency)
	}
	if c.Mode != ModeBurst && c.Requests <= 0 && c.Duration <= 0 {
		return errors.New("a run needs a bound: requests or duration")
	}
	if c.Mode == ModeIdle && (c.Duration <= 0 || c.Requests > 0) {
		return errors.New("an idle run needs a duration (how long the connections stay idle) and no request count")
	}
	if c.Requests < 0 || c.Duration < 0 || c.Timeout < 0 || c.Retries < 0 || c.RetryMaxWait < 0 {
		return errors.New("requests, duration, timeout, retries and the retry wait must not be negative")
	}
	if c.Retry != "" && !slices.Contains(RetryPolicies, c.Retry) {
		return fmt.Errorf("retry %q: want one of %v", c.Retry, RetryPolicies)
	}
	if c.Mode == ModeOpen && c.Pacer == nil {
		return errors.New("an open run needs a pacer")
	}
	if err := c.Shard.validate(); err != nil {
		return err
	}
	if !c.Shard.Whole() {
		if c.Mode != ModeOpen {
			return fmt.Errorf("shard %s: only an open run has a schedule to share", c.Shard)
		}
		if c.Requests > 0 && c.Requests < int64(c.Shard.Count) {
			return fmt.Errorf("shard %s: %d requests leave some generators none", c.Shard, c.Requests)
		}
	}
	if c.Target.Method != "" && c.Target.Method != "GET" && c.Target.Method != "POST" {
		return fmt.Errorf("method %q: want GET or POST", c.Target.Method)
	}
	_, err := ParseURL(c.Target.URL, c.AllowRemote)
	return err
}

// schedule returns the pacer and the request bound (0: none) of this
// generator's share of an open run.
func (c Config) schedule() (Pacer, int64) {
	return c.Shard.Pacer(c.Pacer), c.Shard.Requests(c.Requests)
}

// Defaults returns the settings a run of mode gets for what its caller does
// not set: the defaults of the loadtest command's flags and of a scenario's
// load (loadtest/README.md, Modes). It is their one home.
//
// Every mode: GET, ClientFast, a 30 s timeout per request, up to 5 retries
// of a request (of a refused connection; of a 429 or 503 only with a retry
// policy, none by default), a retry wait of at most 10 s. Burst: 1000
// requests, a warm-up round. Closed: 50 workers for 10 s. Open: at most 1000
// connections, a 30 s window. Idle: 1000 connections held for 10 s. A
// caller that bounds a closed or open run by Requests alone clears Duration.
func Defaults(mode Mode) Config {
	cfg := Config{Mode: mode, Target: Target{Method: "GET"}, Timeout: 30 * time.Second, Client: ClientFast,
		Retries: 5, Retry: RetryNone, RetryMaxWait: 10 * time.Second}
	switch mode {
	case ModeBurst:
		cfg.Concurrency, cfg.Warmup = 1000, true
	case ModeClosed:
		cfg.Concurrency, cfg.Duration = 50, 10*time.Second
	case ModeOpen:
		cfg.Concurrency, cfg.Duration = 1000, 30*time.Second
	case ModeIdle:
		cfg.Concurrency, cfg.Duration = 1000, 10*time.Second
	}
	return cfg
}
