//go:build darwin

package api

import (
	"time"

	"golang.org/x/sys/unix"
)

// blockingSleep waits d in select(2) with no descriptors (blocksleep.go).
// select does not say how much of its timeout is left when a signal
// interrupts it, so the wait runs to a deadline on the monotonic clock.
func blockingSleep(d time.Duration) {
	end := time.Now().Add(d)
	for left := d; left > 0; left = time.Until(end) {
		tv := unix.NsecToTimeval(left.Nanoseconds())
		if _, err := unix.Select(0, nil, nil, nil, &tv); err != unix.EINTR {
			return
		}
	}
}
