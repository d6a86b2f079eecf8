// Package poll is the tests' one way to wait for a state that a system
// under test reaches by itself (a goroutine parked, a gauge at its value,
// a child process started, a value on a channel: recv.go): every wait
// has a deadline, and a wait that runs out fails the test saying what it
// waited for and what it saw last.
// It bounds how long a test may wait, never how fast the system must be:
// a timing claim belongs in a benchmark or in a measurement that can fail
// for that reason alone.
package poll

import (
	"testing"
	"time"
)

// Until calls cond until it returns nil, and fails t (Fatal) when within
// passes first, with what (what the test waited for) and cond's last
// error (what it saw). cond is called at once, then after growing pauses
// of 1 ms up to 50 ms. Call it from the test's goroutine.
func Until(t testing.TB, within time.Duration, what string, cond func() error) {
	t.Helper()
	if err := Wait(within, cond); err != nil {
		t.Fatalf("waited %s for %s: %v", within, what, err)
	}
}

// Wait calls cond until it returns nil, as Until does, and returns cond's
// last error when within passes first: for a wait whose running out is
// not by itself a failure, or that runs off the test's goroutine.
func Wait(within time.Duration, cond func() error) error {
	deadline := time.Now().Add(within)
	pause := time.Millisecond
	for {
		err := cond()
		if err == nil || !time.Now().Before(deadline) {
			return err
		}
		time.Sleep(min(pause, time.Until(deadline)))
		pause = min(2*pause, 50*time.Millisecond)
	}
}
