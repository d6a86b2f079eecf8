package attack

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// callLog is a client's own record of when each request reached it and
// when it returned, against which the generator's lateness is checked.
type callLog struct {
	mu         sync.Mutex
	start, end []time.Time
}

// client returns a Client that records its calls, answers 200 and takes
// at least hold to do so.
func (l *callLog) client(hold time.Duration) Client {
	return ClientFunc(func(*Request) (Response, error) {
		l.mu.Lock()
		l.start = append(l.start, time.Now())
		l.mu.Unlock()
		time.Sleep(hold)
		l.mu.Lock()
		l.end = append(l.end, time.Now())
		l.mu.Unlock()
		return Response{Status: 200}, nil
	})
}

// slowBody makes every request body take at least d to build: time the
// generator spends between deciding to send and sending.
func slowBody(d time.Duration) func([]byte, *rand.Rand, uint64) []byte {
	return func(b []byte, _ *rand.Rand, _ uint64) []byte {
		time.Sleep(d)
		return append(b, "{}"...)
	}
}

// TestClosedRunRecordsTheGapToTheNextRequest: in a closed run the
// generator's lateness is the time from an answer to the next request on
// the same connection. One worker builds each body for at least 2 ms, so
// every gap is at least 2 ms; the first request has no answer before it.
// Each gap is at most what the client itself saw between returning one
// answer and receiving the next request.
func TestClosedRunRecordsTheGapToTheNextRequest(t *testing.T) {
	var log callLog
	res := run(t, Config{Mode: ModeClosed, Concurrency: 1, Requests: 20,
		Target:    Target{URL: "http://127.0.0.1:1/", Method: "POST", Body: slowBody(2 * time.Millisecond)},
		Transport: TransportFunc(func() Client { return log.client(0) })})
	if res.Sent != 20 || res.SchedulerLag.TotalCount() != 19 {
		t.Fatalf("sent %d, gaps recorded %d: want 20 and 19", res.Sent, res.SchedulerLag.TotalCount())
	}
	if low := ms(res.SchedulerLag.Min()); low < 2*time.Millisecond {
		t.Errorf("shortest gap %v, want >= 2ms (the body takes that long)", low)
	}
	var widest time.Duration
	for i := 1; i < len(log.start); i++ {
		widest = max(widest, log.start[i].Sub(log.end[i-1]))
	}
	if high := ms(res.SchedulerLag.Max()); high > widest+time.Millisecond {
		t.Errorf("longest gap %v, more than the client saw (%v)", high, widest)
	}
}

// TestOpenRunRecordsLateness: an open run at 1,000/s on one connection
// whose answers take at least 3 ms falls behind its schedule; request i is
// sent no earlier than the answer before it, so its recorded lateness is at
// least that answer's end minus its due time (taken from the pacer and the
// run's start), and at most the client's own receipt of it minus its due
// time.
func TestOpenRunRecordsLateness(t *testing.T) {
	var log callLog
	pacer := ConstantPacer{Rate: 1000}
	res := run(t, Config{Mode: ModeOpen, Concurrency: 1, Requests: 10, Pacer: pacer,
		Target:    Target{URL: "http://127.0.0.1:1/"},
		Transport: TransportFunc(func() Client { return log.client(3 * time.Millisecond) })})
	if res.Sent != 10 || res.SchedulerLag.TotalCount() != 10 {
		t.Fatalf("sent %d, lateness recorded %d: want 10 and 10", res.Sent, res.SchedulerLag.TotalCount())
	}
	var floor, ceiling time.Duration // of the latest request
	for i := 1; i < len(log.start); i++ {
		due := res.Started.Add(pacer.Due(int64(i)))
		floor, ceiling = log.end[i-1].Sub(due), log.start[i].Sub(due)
	}
	// The last request is the latest: each answer takes 2 ms longer than the schedule allows.
	if got := ms(res.SchedulerLag.Max()); got < floor-time.Millisecond || got > ceiling+time.Millisecond {
		t.Errorf("max lateness %v, want within [%v, %v] (the client's record)", got, floor, ceiling)
	}
	if floor < 15*time.Millisecond {
		t.Errorf("the last request was %v late by the client's record, want >= 15ms: the test does not fall behind", floor)
	}
}

// TestWaitUntilIsNeverEarly: an open run's wait, exact or on a batched
// tick, returns at or after the due time, and at once when the run is
// canceled.
func TestWaitUntilIsNeverEarly(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	w := &worker{a: &Attack{}, client: ClientFunc(nil)}
	defer w.close()
	for _, exact := range []bool{true, false} {
		for _, d := range []time.Duration{-time.Millisecond, 0, 50 * time.Microsecond, 300 * time.Microsecond, 2 * time.Millisecond} {
			due := time.Now().Add(d)
			if !w.waitUntil(ctx, due, exact) {
				t.Fatalf("wait for %v (exact %v): canceled", d, exact)
			}
			if now := time.Now(); now.Before(due) {
				t.Errorf("wait for %v (exact %v) returned %v early", d, exact, due.Sub(now))
			}
		}
	}
	done := make(chan bool)
	go func() { done <- w.waitUntil(ctx, time.Now().Add(time.Hour), true) }()
	cancel()
	select {
	case ok := <-done:
		if ok {
			t.Error("a canceled wait reported that its due time came")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a canceled wait did not return")
	}
}
