package attack

import (
	"context"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// preciseTimer waits on a timerfd: the kernel's high-resolution timer,
// read through the Go netpoller, so a waiting worker parks like one that
// waits for its socket and wakes within microseconds of its deadline. A
// time.Timer wakes an idle process only at the resolution of the netpoller's
// epoll_wait timeout, a millisecond, which put about half a millisecond of
// the generator's own delay into every corrected latency at low rates.
//
// Like the fast client's socket (sock_linux.go), it arms and reads the
// timerfd with raw system calls, which do not wake the runtime's monitor
// thread.
type preciseTimer struct {
	fd     int
	f      *os.File // owns fd; reads park in the netpoller
	rc     syscall.RawConn
	stop   func() bool
	buf    [8]byte
	read   func(fd uintptr) bool
	readOK bool
}

// newPreciseTimer returns a timer that ctx's end fires at once, or nil
// when the system has no timerfd (the caller then uses a time.Timer).
func newPreciseTimer(ctx context.Context) *preciseTimer {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil
	}
	t := &preciseTimer{fd: fd, f: os.NewFile(uintptr(fd), "timerfd")}
	rc, err := t.f.SyscallConn()
	if err != nil {
		_ = t.f.Close()
		return nil
	}
	t.rc = rc
	t.read = t.readOnce
	t.stop = context.AfterFunc(ctx, func() { _ = t.arm(1) })
	return t
}

func (t *preciseTimer) arm(d time.Duration) error {
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	_, _, e := unix.RawSyscall6(unix.SYS_TIMERFD_SETTIME, uintptr(t.fd), 0, uintptr(unsafe.Pointer(&spec)), 0, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// readOnce reads the expiration count; false (not yet: wait) on EAGAIN.
func (t *preciseTimer) readOnce(fd uintptr) bool {
	for {
		_, e := rawRead(fd, t.buf[:])
		switch e {
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return false
		}
		t.readOK = e == 0
		return true
	}
}

// wait blocks for d (> 0) or until ctx, the context newPreciseTimer was
// given, ends; it reports whether d passed.
func (t *preciseTimer) wait(ctx context.Context, d time.Duration) bool {
	if t.arm(d) != nil {
		return false
	}
	// Armed before the check: a cancellation after it re-arms the timer to
	// fire at once, one before it is seen here.
	if ctx.Err() != nil {
		return false
	}
	t.readOK = false
	err := t.rc.Read(t.read)
	return err == nil && t.readOK && ctx.Err() == nil
}

func (t *preciseTimer) close() {
	t.stop()
	_ = t.f.Close()
}
