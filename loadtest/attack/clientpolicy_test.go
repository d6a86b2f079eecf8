package attack

import (
	"net/http"
	"testing"
)

// total is every attempt the server saw.
func (s *rejectingServer) total() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for _, a := range s.attempts {
		n += int64(a)
	}
	return n
}

// Against a server that rejects everything, immediate retries send every
// request Retries+1 times; the retry budget lets only a share of them be
// retried, and the rest of the rejections stand.
func TestRetryBudgetCapsTheRetries(t *testing.T) {
	cfg := Config{Mode: ModeClosed, Concurrency: 20, Requests: 200, Retries: 5}
	s, url := newRejecting(t, 1<<30, "1")
	cfg.Target, cfg.Retry = orders(url), RetryImmediate
	storm := run(t, cfg)
	if storm.Retries != 5*storm.Sent || storm.Attempts() != s.total() {
		t.Fatalf("immediate: %d retries of %d requests, %d attempts (server saw %d); want 5 each", storm.Retries, storm.Sent, storm.Attempts(), s.total())
	}

	s, url = newRejecting(t, 1<<30, "1")
	cfg.Target, cfg.Retry = orders(url), RetryBudget
	res := run(t, cfg)
	if res.Sent != 200 || res.Status[429] != 200 {
		t.Fatalf("budget: answers %v, want 200 x 429", res.Status)
	}
	// At most RetryBudgetRate of the attempts in flight are retries: with
	// 20 requests in flight, about 5; a retry storm would be 5 per request.
	if res.Retries >= res.Sent || res.OverBudget == 0 {
		t.Errorf("budget: %d retries of %d requests, %d over budget; want fewer retries than requests and some refused", res.Retries, res.Sent, res.OverBudget)
	}
	if res.Attempts() != s.total() {
		t.Errorf("budget: %d attempts counted, the server saw %d", res.Attempts(), s.total())
	}
}

// Against a server that rejects everything, the adaptive throttler soon
// refuses most attempts in the client: they never reach the server, and a
// request whose every attempt was refused ends as "throttled". Against a
// server that accepts, it refuses nothing.
func TestRetryThrottleRefusesInTheClient(t *testing.T) {
	cfg := Config{Mode: ModeClosed, Concurrency: 4, Requests: 200, Retries: 2, Retry: RetryThrottle}
	s, url := newRejecting(t, 1<<30, "1")
	cfg.Target = orders(url)
	res := run(t, cfg)
	if res.Throttled == 0 || res.Errors[ErrThrottled.String()] == 0 {
		t.Fatalf("throttle: %d attempts refused in the client, %v errors; want both above 0", res.Throttled, res.Errors)
	}
	if res.Attempts() != s.total() || s.total() >= 3*res.Sent/2 {
		t.Errorf("throttle: %d attempts counted, the server saw %d of %d requests' up to %d: want them equal, and far fewer than the retries allow",
			res.Attempts(), s.total(), res.Sent, 3*res.Sent)
	}
	if got := res.Status[http.StatusTooManyRequests] + res.Errors[ErrThrottled.String()]; got != res.Sent {
		t.Errorf("throttle: %d rejected or throttled of %d requests", got, res.Sent)
	}

	s, url = newRejecting(t, 0, "")
	cfg.Target = orders(url)
	ok := run(t, cfg)
	if ok.Throttled != 0 || ok.Status[http.StatusCreated] != 200 || s.total() != 200 {
		t.Errorf("throttle against a server that accepts: %d refused, answers %v, server saw %d; want none refused", ok.Throttled, ok.Status, s.total())
	}
}
