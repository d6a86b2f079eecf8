package attack

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func run(t *testing.T, cfg Config) *Result {
	t.Helper()
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func ms(us int64) time.Duration { return time.Duration(us) * time.Microsecond }

// TestOpenRunCorrectsForCoordinatedOmission stalls the server for 1 s in
// the middle of an open run at 100/s. The run has two connections, so the
// requests due during the stall wait in the client: measured from their
// intended send times they show the stall (corrected p99 near 1 s), measured
// from when they were finally written they do not (only the two requests in
// flight during the stall, under 1 % of 300, saw it).
//
// The bounds hold on any machine: a stall sleeps at least 1 s, so the
// corrected latencies are at least 1 s minus the requests' offsets into the
// stall, whatever the scheduler does.
func TestOpenRunCorrectsForCoordinatedOmission(t *testing.T) {
	var n atomic.Int64
	var stallUntil atomic.Int64 // unix nanoseconds
	s, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 50 {
			stallUntil.Store(time.Now().Add(time.Second).UnixNano())
		}
		if d := time.Until(time.Unix(0, stallUntil.Load())); d > 0 {
			time.Sleep(d) // the whole server is stuck, as in a long GC pause
		}
	}))
	res := run(t, Config{Mode: ModeOpen, Concurrency: 2, Duration: 3 * time.Second, Pacer: ConstantPacer{Rate: 100},
		Target: Target{URL: s.URL}, Timeout: 10 * time.Second})

	if res.Status[200] < 290 || res.Unsent > 10 {
		t.Fatalf("answered %d of 300 (unsent %d, errors %v)", res.Status[200], res.Unsent, res.Errors)
	}
	corrected, uncorrected := ms(res.Success.ValueAtQuantile(99)), ms(res.SuccessUncorrected.ValueAtQuantile(99))
	t.Logf("p99 corrected %v, uncorrected %v, late %d", corrected, uncorrected, res.Late)
	if corrected < 900*time.Millisecond {
		t.Errorf("corrected p99 = %v, want >= 900ms: the stall is hidden", corrected)
	}
	if uncorrected > corrected/2 {
		t.Errorf("uncorrected p99 = %v, want well below the corrected %v", uncorrected, corrected)
	}
	if res.Late < 50 {
		t.Errorf("late = %d, want the ~100 requests due during the stall", res.Late)
	}
	if lag := ms(res.SchedulerLag.Max()); lag < 900*time.Millisecond {
		t.Errorf("max scheduler lag %v, want about 1s: requests waited for a connection", lag)
	}
}

// TestOpenRunKeepsTheSchedule checks that an open run sends the requests the
// pacer schedules and grows no more connections than it needs.
func TestOpenRunKeepsTheSchedule(t *testing.T) {
	s, conns := newServer(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	res := run(t, Config{Mode: ModeOpen, Concurrency: 50, Requests: 40, Pacer: RampPacer{From: 100, To: 300, Ramp: 100 * time.Millisecond},
		Target: Target{URL: s.URL}})
	if res.Sent != 40 || res.Status[200] != 40 || res.Unsent != 0 {
		t.Errorf("sent %d, 200s %d, unsent %d; want 40, 40, 0", res.Sent, res.Status[200], res.Unsent)
	}
	// The last request is due at 100 ms + 20/300 s ≈ 167 ms.
	if due := (RampPacer{From: 100, To: 300, Ramp: 100 * time.Millisecond}).Due(39); res.Elapsed < due {
		t.Errorf("elapsed %v, before the last request was due (%v)", res.Elapsed, due)
	}
	if n := conns.n.Load(); n >= 50 {
		t.Errorf("opened %d connections for a fast server; the pool should grow only on demand", n)
	}
}

func TestClosedRunStopsAtItsCount(t *testing.T) {
	s, conns := newServer(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	res := run(t, Config{Mode: ModeClosed, Concurrency: 8, Requests: 500, Target: Target{URL: s.URL}})
	if res.Sent != 500 || res.Status[200] != 500 || res.Success.TotalCount() != 500 {
		t.Errorf("sent %d, 200s %d, latencies %d; want 500", res.Sent, res.Status[200], res.Success.TotalCount())
	}
	if n := conns.n.Load(); n != 8 {
		t.Errorf("opened %d connections, want one per worker (8)", n)
	}
}

func TestClosedRunSeparatesRejectionsFromSuccesses(t *testing.T) {
	var n atomic.Int64
	s, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		switch n.Add(1) % 4 {
		case 0:
			w.WriteHeader(http.StatusTooManyRequests)
		case 1:
			w.WriteHeader(http.StatusServiceUnavailable)
		case 2:
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	res := run(t, Config{Mode: ModeClosed, Concurrency: 1, Requests: 40, Target: Target{URL: s.URL}, Client: ClientNetHTTP})
	if res.Success.TotalCount() != 10 || res.Rejected.TotalCount() != 20 || res.Failed.TotalCount() != 10 {
		t.Errorf("success %d, rejected %d, failed %d; want 10, 20, 10",
			res.Success.TotalCount(), res.Rejected.TotalCount(), res.Failed.TotalCount())
	}
}

// TestBurstWarmsUpThenReleasesAll checks that the warm-up round opens one
// connection per request and that the timed round reuses them all.
func TestBurstWarmsUpThenReleasesAll(t *testing.T) {
	var inFlight, peak atomic.Int64
	s, conns := newServer(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		n := inFlight.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		time.Sleep(50 * time.Millisecond)
		inFlight.Add(-1)
	}))
	res := run(t, Config{Mode: ModeBurst, Concurrency: 40, Warmup: true, Target: Target{URL: s.URL}})
	if res.Status[200] != 40 || res.WarmupErrors != 0 {
		t.Fatalf("status %v, warm-up errors %d", res.Status, res.WarmupErrors)
	}
	if n := conns.n.Load(); n != 40 {
		t.Errorf("opened %d connections over two rounds, want 40", n)
	}
	if p := peak.Load(); p != 40 {
		t.Errorf("at most %d requests were in the server at once, want all 40", p)
	}
	if res.Elapsed < 50*time.Millisecond {
		t.Errorf("time until the last answer %v, want >= 50ms", res.Elapsed)
	}
}

// TestRefusedConnectionsAreRetried uses a fake client that is refused twice
// before it gets through.
func TestRefusedConnectionsAreRetried(t *testing.T) {
	refused := &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}
	var calls atomic.Int64
	fake := TransportFunc(func() Client {
		var n int
		return ClientFunc(func(*Request) (Response, error) {
			calls.Add(1)
			if n++; n <= 2 {
				return Response{}, refused
			}
			return Response{Status: 200}, nil
		})
	})
	res := run(t, Config{Mode: ModeBurst, Concurrency: 5, Retries: 3, Target: Target{URL: "http://127.0.0.1:1/"}, Transport: fake})
	if res.Status[200] != 5 || res.Retries != 10 || calls.Load() != 15 {
		t.Errorf("200s %d, retries %d, calls %d; want 5, 10, 15", res.Status[200], res.Retries, calls.Load())
	}
	res = run(t, Config{Mode: ModeBurst, Concurrency: 5, Retries: 1, Target: Target{URL: "http://127.0.0.1:1/"}, Transport: fake})
	if res.Errors["refused"] != 5 || res.Retries != 5 {
		t.Errorf("errors %v, retries %d; want 5 refused after 5 retries", res.Errors, res.Retries)
	}
}

func TestCancelStopsARunEarly(t *testing.T) {
	s, _ := newServer(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { time.Sleep(20 * time.Millisecond) }))
	a, err := New(Config{Mode: ModeOpen, Concurrency: 10, Duration: time.Hour, Pacer: ConstantPacer{Rate: 100}, Target: Target{URL: s.URL}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	res, err := a.Run(ctx)
	if err != context.DeadlineExceeded || res == nil || res.Sent == 0 {
		t.Fatalf("err %v, result %v: want the partial result and the context's error", err, res)
	}
	if p := a.Progress(); p.Sent != res.Sent || p.P99 <= 0 {
		t.Errorf("progress %+v disagrees with the result (sent %d)", p, res.Sent)
	}
}

func TestValidateNamesTheSetting(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Mode: "x"}, "mode"},
		{Config{Mode: ModeClosed}, "concurrency"},
		{Config{Mode: ModeClosed, Concurrency: 1, Target: Target{URL: "http://127.0.0.1/"}}, "bound"},
		{Config{Mode: ModeOpen, Concurrency: 1, Requests: 1, Target: Target{URL: "http://127.0.0.1/"}}, "pacer"},
		{Config{Mode: ModeBurst, Concurrency: 1, Target: Target{URL: "http://example.com/"}}, "loopback"},
		{Config{Mode: ModeBurst, Concurrency: 1, Target: Target{URL: "https://127.0.0.1/"}}, "scheme"},
	} {
		err := tc.cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error about %s", tc.cfg, err, tc.want)
		}
	}
}

// TestOpenRunDrainsRequestsDueBeforeTheEnd stalls the server from the 60th
// request until well after the 600 ms window has closed. With two
// connections, the requests due in the rest of the window wait in the
// client: they must be sent after the stall and measured from their due
// times (late, and slow), not dropped as unsent with the stall unseen.
//
// The bounds hold on any machine: the stall ends at least 800 ms after the
// start, every request is due before 600 ms, and no request after the two
// stalled ones can be written before the stall ends.
func TestOpenRunDrainsRequestsDueBeforeTheEnd(t *testing.T) {
	var n atomic.Int64
	var first, stallUntil atomic.Int64 // unix nanoseconds
	s, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		first.CompareAndSwap(0, now.UnixNano())
		if n.Add(1) == 60 {
			stallUntil.Store(first.Load() + int64(800*time.Millisecond))
		}
		if d := time.Until(time.Unix(0, stallUntil.Load())); d > 0 {
			time.Sleep(d)
		}
	}))
	res := run(t, Config{Mode: ModeOpen, Concurrency: 2, Duration: 600 * time.Millisecond, Pacer: ConstantPacer{Rate: 200},
		Target: Target{URL: s.URL}, Timeout: 10 * time.Second})
	const due, afterStall = 120, 120 - 62
	if res.Unsent != 0 || res.Sent != due || res.Status[200] != due {
		t.Fatalf("sent %d (200s %d), unsent %d; want all %d due in the window sent", res.Sent, res.Status[200], res.Unsent, due)
	}
	if res.Late < afterStall {
		t.Errorf("late = %d, want >= %d (every request due during the stall)", res.Late, afterStall)
	}
	var slow int64 // successes with a corrected latency over 200 ms
	for _, b := range res.Success.Distribution() {
		if b.From >= 200_000 {
			slow += b.Count
		}
	}
	if slow < afterStall {
		t.Errorf("%d successes with corrected latency > 200ms, want >= %d: the stall is hidden", slow, afterStall)
	}
}

// TestOpenRunGivesUpTimeoutAfterTheEnd: a server that never answers in
// time. The drain after the window stops after -timeout; what is still
// waiting then is unsent, and unsent requests are late as well.
func TestOpenRunGivesUpTimeoutAfterTheEnd(t *testing.T) {
	var n atomic.Int64
	s, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) > 10 {
			select { // stuck until the client gives up on it
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}
	}))
	res := run(t, Config{Mode: ModeOpen, Concurrency: 1, Duration: 300 * time.Millisecond, Pacer: ConstantPacer{Rate: 100},
		Target: Target{URL: s.URL}, Timeout: 100 * time.Millisecond})
	if res.Sent+res.Unsent != 30 || res.Unsent == 0 || res.Errors["timeout"] == 0 {
		t.Fatalf("sent %d, unsent %d, errors %v; want 30 in all, some timed out, some unsent", res.Sent, res.Unsent, res.Errors)
	}
	if res.Late < res.Unsent {
		t.Errorf("late %d < unsent %d: an unsent request waited for a connection too", res.Late, res.Unsent)
	}
}

// TestInterruptedOpenRunCountsOnlyWhatFellDue cancels an hour-long run
// after 300 ms: the rest of the hour's schedule was never due.
func TestInterruptedOpenRunCountsOnlyWhatFellDue(t *testing.T) {
	s, _ := newServer(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	a, err := New(Config{Mode: ModeOpen, Concurrency: 4, Duration: time.Hour, Pacer: ConstantPacer{Rate: 100}, Target: Target{URL: s.URL}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	res, err := a.Run(ctx)
	if err != context.DeadlineExceeded || res == nil {
		t.Fatalf("err %v", err)
	}
	// 100/s for 300 ms is 30 requests; an hour would be 360,000.
	if res.Unsent > 100 {
		t.Errorf("unsent %d after an interruption at 300 ms: the rest of the schedule counted", res.Unsent)
	}
}

// TestOnReleaseRunsAfterTheWarmUp: a burst calls OnRelease once, after the
// warm-up round and before the timed one.
func TestOnReleaseRunsAfterTheWarmUp(t *testing.T) {
	var served, atRelease atomic.Int64
	var calls atomic.Int64
	s, _ := newServer(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served.Add(1) }))
	res := run(t, Config{Mode: ModeBurst, Concurrency: 10, Warmup: true, Target: Target{URL: s.URL},
		OnRelease: func() { calls.Add(1); atRelease.Store(served.Load()) }})
	if res.Status[200] != 10 || calls.Load() != 1 || atRelease.Load() != 10 {
		t.Errorf("200s %d, OnRelease called %d times with %d requests served; want 10, once, 10 (the warm-up)",
			res.Status[200], calls.Load(), atRelease.Load())
	}
	for _, mode := range []Mode{ModeClosed, ModeOpen} {
		calls.Store(0)
		run(t, Config{Mode: mode, Concurrency: 1, Requests: 3, Pacer: ConstantPacer{Rate: 1000}, Target: Target{URL: s.URL},
			OnRelease: func() { calls.Add(1) }})
		if calls.Load() != 1 {
			t.Errorf("%s: OnRelease called %d times, want once", mode, calls.Load())
		}
	}
}

// TestIdleRunHoldsItsConnections: an idle run takes its baseline before any
// connection opens, sends one request on each of its connections, and
// keeps them all open, without requests, until the hold ends.
func TestIdleRunHoldsItsConnections(t *testing.T) {
	var served, atRelease, idleOpen, peakIdle atomic.Int64
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served.Add(1) }))
	// Each connection serves one request, goes idle and stays so until it closes.
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		switch st {
		case http.StateIdle:
			n := idleOpen.Add(1)
			for p := peakIdle.Load(); n > p && !peakIdle.CompareAndSwap(p, n); p = peakIdle.Load() {
			}
		case http.StateClosed:
			idleOpen.Add(-1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	const conns = 100
	res := run(t, Config{Mode: ModeIdle, Concurrency: conns, Duration: 200 * time.Millisecond, Target: Target{URL: s.URL},
		OnRelease: func() { atRelease.Store(served.Load()) }})
	if res.Status[200] != conns || served.Load() != conns || atRelease.Load() != 0 {
		t.Fatalf("200s %d, served %d, served before the baseline %d; want %d, %d, 0", res.Status[200], served.Load(), atRelease.Load(), conns, conns)
	}
	if p := peakIdle.Load(); p != conns {
		t.Errorf("at most %d connections were idle at once, want all %d", p, conns)
	}
}
