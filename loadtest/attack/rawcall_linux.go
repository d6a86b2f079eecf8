//go:build linux && !race

package attack

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// rawRead and rawWrite are read(2) and write(2) on a nonblocking fd,
// without the runtime's syscall bookkeeping (see sock). p is not empty.
func rawRead(fd uintptr, p []byte) (int, unix.Errno) {
	n, _, e := unix.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	return int(n), e
}

func rawWrite(fd uintptr, p []byte) (int, unix.Errno) {
	n, _, e := unix.RawSyscall(unix.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	return int(n), e
}
