package poll

import (
	"testing"
	"time"
)

// Recv returns the next value from ch, and fails t (Fatal) with what (what
// the test waited for) when within passes first: a test's receive that
// cannot hang until the package's timeout when the system under test
// never sends. A closed ch returns its zero value at once, as a receive
// does. Inside a testing/synctest bubble within is virtual time: a send
// that can never come fails the test as soon as every goroutine in the
// bubble waits. Call it from the test's goroutine.
func Recv[T any](t testing.TB, within time.Duration, what string, ch <-chan T) T {
	t.Helper()
	timer := time.NewTimer(within)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("waited %s for %s", within, what)
		panic("unreachable")
	}
}

// Returns calls f on a goroutine of its own and waits for it to return,
// failing t (Fatal) with what when within passes first: for a blocking
// call (a sync.WaitGroup's Wait) that a broken system would leave blocked.
// Call it from the test's goroutine.
func Returns(t testing.TB, within time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	Recv(t, within, what, done)
}
