//go:build !(linux || freebsd || netbsd || openbsd || darwin)

package api

import (
	"runtime"
	"time"
)

// blockingSleep pins the goroutine to its OS thread and sleeps on a timer:
// the thread parks in the runtime for the whole wait (blocksleep.go).
func blockingSleep(d time.Duration) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	time.Sleep(d)
}
