//go:build linux && race

package attack

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// Under the race detector, rawRead and rawWrite go through package syscall,
// whose Read and Write tell the detector that what one side writes to a
// socket happens before the other side reads it (raw system calls would
// leave every test that checks a server's record after its answer racy).
func rawRead(fd uintptr, p []byte) (int, unix.Errno) {
	n, err := syscall.Read(int(fd), p)
	return max(n, 0), errno(err)
}

func rawWrite(fd uintptr, p []byte) (int, unix.Errno) {
	n, err := syscall.Write(int(fd), p)
	return max(n, 0), errno(err)
}

func errno(err error) unix.Errno {
	var e syscall.Errno
	if errors.As(err, &e) {
		return e
	}
	return 0
}
