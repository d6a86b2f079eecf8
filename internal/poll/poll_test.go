package poll

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestWaitReturnsOnceTheConditionHolds(t *testing.T) {
	var calls atomic.Int32
	err := Wait(time.Minute, func() error {
		if calls.Add(1) < 3 {
			return errors.New("not yet")
		}
		return nil
	})
	if err != nil || calls.Load() != 3 {
		t.Errorf("Wait = %v after %d calls, want nil after 3", err, calls.Load())
	}
}

// A condition that never holds ends at the deadline with its last error,
// called more than once on the way.
func TestWaitRunsOutWithTheLastState(t *testing.T) {
	var calls int
	err := Wait(30*time.Millisecond, func() error { calls++; return fmt.Errorf("state %d", calls) })
	if err == nil || err.Error() != fmt.Sprintf("state %d", calls) || calls < 2 {
		t.Errorf("Wait = %v after %d calls, want the last call's state, after several", err, calls)
	}
}

// Until fails the test with what it waited for and the last state.
func TestUntilSaysWhatItWaitedFor(t *testing.T) {
	rec := &recorder{}
	func() {
		defer func() { _ = recover() }() // Fatalf's stand-in panics to end the wait
		Until(rec, 10*time.Millisecond, "the gauge at 3", func() error { return errors.New("gauge 2") })
	}()
	if !strings.Contains(rec.msg, "the gauge at 3") || !strings.Contains(rec.msg, "gauge 2") {
		t.Errorf("failure %q: want what was awaited and the last state", rec.msg)
	}
}

type recorder struct {
	testing.TB
	msg string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	panic("fatal")
}

// Recv returns what was sent, and fails by name when nothing comes.
func TestRecvReturnsTheValueOrSaysWhatItWaitedFor(t *testing.T) {
	ch := make(chan int, 1)
	ch <- 7
	if got := Recv(t, time.Minute, "a seven", ch); got != 7 {
		t.Errorf("Recv = %d, want 7", got)
	}
	rec := &recorder{}
	func() {
		defer func() { _ = recover() }()
		Recv(rec, 10*time.Millisecond, "the answer", ch)
	}()
	if !strings.Contains(rec.msg, "the answer") {
		t.Errorf("failure %q: want what was awaited", rec.msg)
	}
}

// Returns waits for f, and fails by name when f does not return in time.
func TestReturnsWaitsForTheCallOrSaysWhatItWaitedFor(t *testing.T) {
	var called atomic.Bool
	Returns(t, time.Minute, "a quick call", func() { called.Store(true) })
	if !called.Load() {
		t.Error("Returns came back before its call did")
	}
	rec := &recorder{}
	release := make(chan struct{})
	defer close(release)
	func() {
		defer func() { _ = recover() }()
		Returns(rec, 10*time.Millisecond, "the stuck call", func() { <-release })
	}()
	if !strings.Contains(rec.msg, "the stuck call") {
		t.Errorf("failure %q: want what was awaited", rec.msg)
	}
}
