package attack

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// virtualRun runs cfg in a synctest bubble against an in-process server
// that answers request n (counted from 0 in arrival order) after exactly
// hold(n) of virtual time. In the bubble, time advances only when every
// goroutine waits, so the answer times are known exactly and the run's
// figures must match them, not merely come close.
func virtualRun(t *testing.T, cfg Config, hold func(n int64, arrived time.Duration) time.Duration) *Result {
	t.Helper()
	return virtualServe(t, cfg, func(n int64, arrived time.Duration, _ *Request) (int, time.Duration) {
		return 200, hold(n, arrived)
	})
}

// virtualServe is virtualRun with a server that answers attempt n (of any
// request, counted from 0 in arrival order) with the status answer gives,
// after the hold it gives.
func virtualServe(t *testing.T, cfg Config, answer func(n int64, arrived time.Duration, req *Request) (status int, hold time.Duration)) *Result {
	t.Helper()
	var res *Result
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		var n atomic.Int64
		cfg.Transport = TransportFunc(func() Client {
			return ClientFunc(func(req *Request) (Response, error) {
				status, hold := answer(n.Add(1)-1, time.Since(t0), req)
				time.Sleep(hold)
				return Response{Status: status}, nil
			})
		})
		cfg.Target.URL, cfg.timerWaits = "http://127.0.0.1:1/", true
		a, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if res, err = a.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
	return res
}

// within reports whether got is want give or take 2 % plus slack.
func within(got, want, slack time.Duration) bool {
	d := got - want
	return d.Abs() <= want/50+slack
}

// TestOpenRunReportsKnownAnswerTimes: a server that answers after exactly
// d, for d from 1 ms to 200 ms, and one that answers every tenth request
// after 100 ms and the others after 2 ms, are reported with p50 and p99
// within 2 % plus the generator's measured lateness.
func TestOpenRunReportsKnownAnswerTimes(t *testing.T) {
	exactly := func(d time.Duration) func(int64, time.Duration) time.Duration {
		return func(int64, time.Duration) time.Duration { return d }
	}
	for _, c := range []struct {
		name     string
		hold     func(int64, time.Duration) time.Duration
		p50, p99 time.Duration
	}{
		{"1ms", exactly(time.Millisecond), time.Millisecond, time.Millisecond},
		{"10ms", exactly(10 * time.Millisecond), 10 * time.Millisecond, 10 * time.Millisecond},
		{"50ms", exactly(50 * time.Millisecond), 50 * time.Millisecond, 50 * time.Millisecond},
		{"200ms", exactly(200 * time.Millisecond), 200 * time.Millisecond, 200 * time.Millisecond},
		{"bimodal", func(n int64, _ time.Duration) time.Duration {
			if n%10 == 0 {
				return 100 * time.Millisecond
			}
			return 2 * time.Millisecond
		}, 2 * time.Millisecond, 100 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := virtualRun(t, Config{Mode: ModeOpen, Concurrency: 100, Requests: 500, Pacer: ConstantPacer{Rate: 200}}, c.hold)
			if res.Sent != 500 || res.Status[200] != 500 || res.Late != 0 {
				t.Fatalf("sent %d, ok %d, late %d: want 500, 500, 0", res.Sent, res.Status[200], res.Late)
			}
			lag := ms(res.SchedulerLag.ValueAtQuantile(99))
			for _, q := range []struct {
				name      string
				got, want time.Duration
			}{
				{"p50", ms(res.Success.ValueAtQuantile(50)), c.p50},
				{"p99", ms(res.Success.ValueAtQuantile(99)), c.p99},
				{"uncorrected p50", ms(res.SuccessUncorrected.ValueAtQuantile(50)), c.p50},
				{"uncorrected p99", ms(res.SuccessUncorrected.ValueAtQuantile(99)), c.p99},
			} {
				if !within(q.got, q.want, lag) {
					t.Errorf("%s %v, want %v within 2 %% + lateness p99 %v", q.name, q.got, q.want, lag)
				}
			}
		})
	}
}

// TestOneStallShowsOnlyInTheCorrectedTail: a server that answers in 1 ms
// stalls once, for 1 s, during an open run of 2,000 requests at 500/s on
// one connection. The requests due during the stall (about 500) wait in the
// client and are measured from their due times: the corrected p99 and
// p99.9 show the stall. The uncorrected latencies see it only in the one
// request in flight when it began, under 0.1 % of them. Every request due
// is sent, and those due during the stall are counted late.
func TestOneStallShowsOnlyInTheCorrectedTail(t *testing.T) {
	const stallAt, stall = time.Second, time.Second
	var once sync.Once
	res := virtualRun(t, Config{Mode: ModeOpen, Concurrency: 1, Duration: 4 * time.Second, Timeout: 10 * time.Second, Pacer: ConstantPacer{Rate: 500}},
		func(_ int64, arrived time.Duration) time.Duration {
			d := time.Millisecond
			if arrived >= stallAt {
				once.Do(func() { d = stall })
			}
			return d
		})
	if res.Sent != 2000 || res.Unsent != 0 || res.Status[200] != 2000 {
		t.Fatalf("sent %d, unsent %d, ok %d: want the 2000 requests due in 4 s at 500/s", res.Sent, res.Unsent, res.Status[200])
	}
	if res.Late < 450 {
		t.Errorf("late %d, want about the 500 requests due during the stall", res.Late)
	}
	for _, q := range []float64{99, 99.9} {
		if c := ms(res.Success.ValueAtQuantile(q)); c < 900*time.Millisecond {
			t.Errorf("corrected p%v %v, want the stall (>= 900ms)", q, c)
		}
		if u := ms(res.SuccessUncorrected.ValueAtQuantile(q)); u > 2*time.Millisecond {
			t.Errorf("uncorrected p%v %v, want the 1 ms answers: only one request was in flight during the stall", q, u)
		}
	}
}

// TestCountsMatchTheServersTally: against a loopback server that closes
// every fifth connection after answering, answers every seventh request
// 429 with a Retry-After, and every eleventh after 20 ms, a closed run's
// counts are the server's own.
func TestCountsMatchTheServersTally(t *testing.T) {
	var mu sync.Mutex
	tally := map[int]int64{}
	var n atomic.Int64
	s, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		i := n.Add(1)
		status := http.StatusOK
		if i%5 == 0 {
			w.Header().Set("Connection", "close")
		}
		if i%7 == 0 {
			w.Header().Set("Retry-After", "1")
			status = http.StatusTooManyRequests
		}
		if i%11 == 0 {
			time.Sleep(20 * time.Millisecond)
		}
		mu.Lock()
		tally[status]++
		mu.Unlock()
		w.WriteHeader(status)
		_, _ = w.Write([]byte(strconv.FormatInt(i, 10)))
	}))
	for _, kind := range []ClientKind{ClientFast, ClientNetHTTP} {
		t.Run(string(kind), func(t *testing.T) {
			mu.Lock()
			clear(tally)
			mu.Unlock()
			res := run(t, Config{Mode: ModeClosed, Concurrency: 4, Requests: 300, Client: kind, Timeout: 10 * time.Second, Target: Target{URL: s.URL}})
			mu.Lock()
			defer mu.Unlock()
			if res.Sent != 300 || res.ErrorCount() != 0 || res.Status[200] != tally[200] || res.Status[429] != tally[429] || tally[200]+tally[429] != 300 {
				t.Errorf("client: sent %d, status %v, errors %v; server's tally %v", res.Sent, res.Status, res.Errors, tally)
			}
		})
	}
}

// TestBatchedTicksSendEachRequestOnItsTick: at 50,000/s requests fall due
// 20 µs apart, closer than batchSpacing, so they leave on a grid of batchTick
// from the start, the requests of one tick together. In virtual time the
// send times are exact: every request reaches the server on the first tick
// at or after its due time, none early, none lost.
func TestBatchedTicksSendEachRequestOnItsTick(t *testing.T) {
	const n = 500
	pacer := ConstantPacer{Rate: 50000}
	var mu sync.Mutex
	arrivals := make([]time.Duration, 0, n)
	res := virtualRun(t, Config{Mode: ModeOpen, Concurrency: 100, Requests: n, Pacer: pacer},
		func(_ int64, arrived time.Duration) time.Duration {
			mu.Lock()
			arrivals = append(arrivals, arrived)
			mu.Unlock()
			return time.Millisecond
		})
	if res.Sent != n || res.Status[200] != n || res.Unsent != 0 {
		t.Fatalf("sent %d, ok %d, unsent %d; want %d, %d, 0", res.Sent, res.Status[200], res.Unsent, n, n)
	}
	// Request 0 is due at the start, on tick 0: the first arrival is the start.
	slices.Sort(arrivals)
	perTick := map[time.Duration]int{}
	for _, a := range arrivals {
		perTick[a-arrivals[0]]++
	}
	want := map[time.Duration]int{}
	for i := range int64(n) {
		off := pacer.Due(i)
		want[(off+batchTick-1)/batchTick*batchTick]++
	}
	if !maps.Equal(perTick, want) {
		t.Errorf("requests per send time (from the start) %v, want per tick %v", perTick, want)
	}
}
