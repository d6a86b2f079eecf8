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
