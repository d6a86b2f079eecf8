//go:build linux || freebsd || netbsd || openbsd

package api

import (
	"time"

	"golang.org/x/sys/unix"
)

// blockingSleep waits d in the nanosleep system call (blocksleep.go).
func blockingSleep(d time.Duration) {
	ts := unix.NsecToTimespec(d.Nanoseconds())
	for {
		var left unix.Timespec
		if err := unix.Nanosleep(&ts, &left); err != unix.EINTR {
			return
		}
		ts = left
	}
}
