package attack

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"
)

// rejectingServer answers 429 to the first rejections attempts of each
// Idempotency-Key, with Retry-After set to retryAfter when it is not empty,
// then 201. It records the attempts per key, and the attempts whose
// RetryAttemptHeader did not say which attempt they were.
type rejectingServer struct {
	rejections int
	retryAfter string
	status     int // the rejection's status: 429 or 503

	mu          sync.Mutex
	attempts    map[string]int
	misnumbered []string
}

func (s *rejectingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("Idempotency-Key")
	s.mu.Lock()
	s.attempts[key]++
	n := s.attempts[key]
	want := ""
	if n > 1 {
		want = strconv.Itoa(n - 1)
	}
	if got := r.Header.Get(RetryAttemptHeader); got != want {
		s.misnumbered = append(s.misnumbered, fmt.Sprintf("%s attempt %d: %s %q, want %q", key, n, RetryAttemptHeader, got, want))
	}
	s.mu.Unlock()
	if n <= s.rejections {
		if s.retryAfter != "" {
			w.Header().Set("Retry-After", s.retryAfter)
		}
		w.WriteHeader(s.status)
		return
	}
	w.WriteHeader(http.StatusCreated)
}

func newRejecting(t *testing.T, rejections int, retryAfter string) (*rejectingServer, string) {
	s := &rejectingServer{rejections: rejections, retryAfter: retryAfter, status: http.StatusTooManyRequests, attempts: map[string]int{}}
	srv, _ := newServer(t, s)
	return s, srv.URL + "/orders"
}

func orders(url string) Target { return Target{Method: "POST", URL: url, Body: BodyFor("POST")} }

// With -retry immediate each rejected request is sent again at once, with
// the same Idempotency-Key and its attempt's number, until it succeeds;
// every attempt is counted.
func TestRetryImmediateResendsTheSameRequest(t *testing.T) {
	for _, client := range []ClientKind{ClientFast, ClientNetHTTP} {
		t.Run(string(client), func(t *testing.T) {
			s, url := newRejecting(t, 2, "1")
			res := run(t, Config{Mode: ModeClosed, Concurrency: 4, Requests: 40, Retries: 5, Retry: RetryImmediate, Target: orders(url), Client: client})
			if res.Status[201] != 40 || res.Status[429] != 0 {
				t.Errorf("final answers %v, want 40 x 201", res.Status)
			}
			if res.Retries != 80 || res.Attempts() != 120 {
				t.Errorf("retries %d, attempts %d; want 80 and 120", res.Retries, res.Attempts())
			}
			if len(s.attempts) != 40 {
				t.Errorf("%d distinct keys, want 40: a retry must resend the same request", len(s.attempts))
			}
			for k, n := range s.attempts {
				if n != 3 {
					t.Errorf("key %s sent %d times, want 3", k, n)
				}
			}
			for _, m := range s.misnumbered {
				t.Error(m)
			}
		})
	}
}

// With -retry none a 429 is a final answer.
func TestRetryNoneCountsTheRejection(t *testing.T) {
	_, url := newRejecting(t, 1, "1")
	res := run(t, Config{Mode: ModeClosed, Concurrency: 2, Requests: 10, Retries: 5, Retry: RetryNone, Target: orders(url)})
	if res.Status[429] != 10 || res.Retries != 0 {
		t.Errorf("answers %v, retries %d; want 10 x 429 and no retry", res.Status, res.Retries)
	}
}

// A request still rejected after Retries resends ends as a rejection.
func TestRetriesAreBounded(t *testing.T) {
	_, url := newRejecting(t, 100, "")
	res := run(t, Config{Mode: ModeClosed, Concurrency: 1, Requests: 3, Retries: 2, Retry: RetryImmediate, Target: orders(url)})
	if res.Status[429] != 3 || res.Retries != 6 {
		t.Errorf("answers %v, retries %d; want 3 x 429 after 2 retries each", res.Status, res.Retries)
	}
}

// With -retry honor a client waits at least Retry-After before it comes
// back, and the latency of the success runs from its first attempt.
func TestRetryHonorWaitsRetryAfter(t *testing.T) {
	_, url := newRejecting(t, 1, "1")
	res := run(t, Config{Mode: ModeClosed, Concurrency: 3, Requests: 3, Retries: 5, Retry: RetryHonor, RetryMaxWait: 10 * time.Second, Target: orders(url)})
	if res.Status[201] != 3 || res.Retries != 3 {
		t.Fatalf("answers %v, retries %d; want 3 x 201 after one retry each", res.Status, res.Retries)
	}
	if min := ms(res.Success.Min()); min < time.Second {
		t.Errorf("fastest success took %s from its first attempt, want at least the 1 s Retry-After", min)
	}
	if max := ms(res.Success.Max()); max >= 2*time.Second+500*time.Millisecond {
		t.Errorf("slowest success took %s, want under 2 Retry-Afters (the jitter is at most one more)", max)
	}
}

// RetryMaxWait caps what a Retry-After asks.
func TestRetryHonorIsCappedByMaxWait(t *testing.T) {
	_, url := newRejecting(t, 1, "3600")
	res := run(t, Config{Mode: ModeClosed, Concurrency: 1, Requests: 1, Retries: 1, Retry: RetryHonor, RetryMaxWait: 50 * time.Millisecond, Target: orders(url)})
	if res.Status[201] != 1 || ms(res.Success.Max()) > 30*time.Second {
		t.Errorf("answers %v, latency %s; want a success after at most the 50 ms cap", res.Status, ms(res.Success.Max()))
	}
}

// A 503 without Retry-After is retried with a jittered backoff.
func TestRetryHonorWithoutRetryAfterBacksOff(t *testing.T) {
	s, url := newRejecting(t, 2, "")
	s.status = http.StatusServiceUnavailable
	res := run(t, Config{Mode: ModeClosed, Concurrency: 2, Requests: 4, Retries: 3, Retry: RetryHonor, RetryMaxWait: time.Second, Target: orders(url)})
	if res.Status[201] != 4 || res.Retries != 8 {
		t.Errorf("answers %v, retries %d; want 4 x 201 after two retries each", res.Status, res.Retries)
	}
}

// In an open run a retried request's latency starts at the first attempt's
// intended send time.
func TestOpenRetryLatencyStartsAtTheIntendedTime(t *testing.T) {
	_, url := newRejecting(t, 1, "1")
	res := run(t, Config{Mode: ModeOpen, Concurrency: 10, Requests: 5, Pacer: ConstantPacer{Rate: 50}, Retries: 2,
		Retry: RetryHonor, RetryMaxWait: 10 * time.Second, Target: orders(url)})
	if res.Status[201] != 5 {
		t.Fatalf("answers %v, want 5 x 201", res.Status)
	}
	if min := ms(res.Success.Min()); min < time.Second {
		t.Errorf("fastest corrected latency %s, want at least the 1 s Retry-After", min)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"0", 0},
		{"5", 5 * time.Second},
		{"120", 2 * time.Minute},
		{"-1", 0},
		{"1.5", 0},
		{"soon", 0},
		{"99999999999999999999", 0},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0},
	} {
		if got := parseRetryAfter([]byte(tc.in), now); got != tc.want {
			t.Errorf("parseRetryAfter(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { parseRetryAfter([]byte("17"), now) }); n != 0 {
		t.Errorf("parseRetryAfter of seconds allocates %v times", n)
	}
}

// A retry that would fall after the run's window is not made: the
// rejection stands, and the run ends with its window.
func TestNoRetryAfterTheWindow(t *testing.T) {
	_, url := newRejecting(t, 1, "5")
	res := run(t, Config{Mode: ModeClosed, Concurrency: 2, Duration: 200 * time.Millisecond, Retries: 3, Retry: RetryHonor,
		RetryMaxWait: time.Minute, Target: orders(url)})
	if res.Retries != 0 || res.Status[429] == 0 || res.Status[201] != 0 {
		t.Errorf("answers %v, retries %d; want only 429s and no retry past the window", res.Status, res.Retries)
	}
	if res.Elapsed > 5*time.Second {
		t.Errorf("the run took %s: it waited for a retry after its window", res.Elapsed)
	}
}
