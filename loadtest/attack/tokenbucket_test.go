package attack

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The bucket as gRPC's retry design states it: full at 10, a failure
// takes one, a success gives back 0.1, and a failure is retried only while
// more than 5 are left.
func TestTokenBucketCountsFailuresAgainstSuccesses(t *testing.T) {
	b := newTokenBucket(TokenBucketMax, TokenBucketRatio)
	for i, want := range []bool{true, true, true, true, false, false} { // 9, 8, 7, 6 left: retried; 5, 4: not
		if got := b.failed(); got != want {
			t.Fatalf("failure %d from a full bucket: retry %v, want %v (%.1f tokens left)", i+1, got, want, b.count())
		}
	}
	for range 100 { // 4 left, never below 0, never above 10
		b.failed()
	}
	if b.count() != 0 {
		t.Fatalf("%.3f tokens after 106 failures, want 0: the count never goes below 0", b.count())
	}
	for range 60 {
		b.succeeded()
	}
	if b.count() != 6 {
		t.Fatalf("%.3f tokens after 60 successes from 0, want 6.0 exactly", b.count())
	}
	if b.failed() {
		t.Fatal("a failure at 6.0 tokens was retried: 5.0 left is not above half of 10")
	}
	for range 11 {
		b.succeeded()
	}
	if !b.failed() {
		t.Fatalf("a failure at 6.1 tokens was not retried: 5.1 left is above half of 10")
	}
	for range 1000 {
		b.succeeded()
	}
	if b.count() != TokenBucketMax {
		t.Fatalf("%.3f tokens after 1000 successes, want at most %d", b.count(), TokenBucketMax)
	}
}

// Workers share the bucket: failures taken at once from every side leave
// it empty, and never below.
func TestTokenBucketIsSharedSafely(t *testing.T) {
	b := newTokenBucket(TokenBucketMax, TokenBucketRatio)
	var retried atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				if b.failed() {
					retried.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if b.count() != 0 || retried.Load() != 4 {
		t.Fatalf("after 400 concurrent failures: %.3f tokens, %d retried; want 0 and 4 (9, 8, 7 and 6 left)", b.count(), retried.Load())
	}
}

// virtualAnswers runs cfg against a server that answers each attempt
// answer(when it arrived, its attempt number) after a millisecond of
// virtual time (virtualServe), and returns the result with the number of
// attempts that reached the server.
func virtualAnswers(t *testing.T, cfg Config, answer func(arrived time.Duration, attempt int) int) (*Result, int64) {
	t.Helper()
	var attempts atomic.Int64
	res := virtualServe(t, cfg, func(_ int64, arrived time.Duration, req *Request) (int, time.Duration) {
		attempts.Add(1)
		return answer(arrived, req.Attempt), time.Millisecond
	})
	return res, attempts.Load()
}

// An open run at 100/s for 4 s against a server that rejects everything
// that arrives in its second and third second: with the bucket, the
// first rejection of the overload is sent again four times (9, 8, 7, 6
// tokens left) and then no other, and the 100 successes after it fill the
// bucket again; resent at once, every rejection is sent five times more.
func TestTokenBucketBindsAnOpenLoopStorm(t *testing.T) {
	overloaded := func(at time.Duration, _ int) int {
		if at >= time.Second && at < 3*time.Second {
			return 429
		}
		return 201
	}
	cfg := Config{Mode: ModeOpen, Concurrency: 10, Duration: 4 * time.Second, Pacer: ConstantPacer{Rate: 100}, Retries: 5}
	for _, c := range []struct {
		policy               RetryPolicy
		attempts, overBudget int64
		amplification        float64
	}{
		{RetryTokenBucket, 404, 200, 1.01},
		{RetryImmediate, 1400, 0, 3.5},
	} {
		t.Run(string(c.policy), func(t *testing.T) {
			cfg.Retry = c.policy
			res, seen := virtualAnswers(t, cfg, overloaded)
			if res.Sent != 400 || res.Status[201] != 200 || res.Status[429] != 200 || res.Late != 0 {
				t.Fatalf("sent %d, answers %v, late %d: want 400 sent on time, 200 x 201, 200 x 429", res.Sent, res.Status, res.Late)
			}
			if res.Attempts() != c.attempts || seen != c.attempts || res.OverBudget != c.overBudget {
				t.Errorf("attempts %d (the server saw %d), over budget %d; want %d, %d", res.Attempts(), seen, res.OverBudget, c.attempts, c.overBudget)
			}
			if got := res.Amplification(); got != c.amplification {
				t.Errorf("amplification %v, want %v", got, c.amplification)
			}
		})
	}
}

// Resent in an open run, retries add to the arrivals: the schedule's
// requests still leave on time while the resends of the ones before them
// are in flight, and the server sees three attempts for each of them.
func TestOpenLoopRetriesAddToTheArrivals(t *testing.T) {
	twice := func(_ time.Duration, attempt int) int {
		if attempt < 2 {
			return 429
		}
		return 201
	}
	res, seen := virtualAnswers(t, Config{Mode: ModeOpen, Concurrency: 10, Duration: time.Second, Pacer: ConstantPacer{Rate: 200},
		Retries: 5, Retry: RetryImmediate}, twice)
	if res.Sent != 200 || res.Status[201] != 200 || res.Late != 0 {
		t.Fatalf("sent %d, answers %v, late %d: want 200 successes, each first attempt on time", res.Sent, res.Status, res.Late)
	}
	if seen != 600 || res.Retries != 400 || res.Amplification() != 3 {
		t.Errorf("the server saw %d attempts in the second, retries %d, amplification %v; want 600, 400 and 3", seen, res.Retries, res.Amplification())
	}
}
