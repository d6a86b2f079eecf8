package attack

import (
	"io"
	"net"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// sock is a rawClient's connection as the fast client reads and writes it
// on Linux: read(2) and write(2) as raw system calls on the nonblocking
// socket, parked in the Go netpoller when the socket is not ready, as
// net.Conn parks. The calls bypass the runtime's syscall bookkeeping
// (entersyscall and exitsyscall): a nonblocking read or write never blocks,
// so there is no processor to hand off, and with the bookkeeping every
// request of an idle-then-busy process woke the runtime's monitor thread
// (sysmon), which then polled every 20 µs until the process idled again
// (measured in loadtest/README.md, "Efficiency").
//
// The first read after a write still usually returns EAGAIN: skipping it
// and parking at once would race with the netpoller, whose readiness the
// poller's prepareRead clears before the callback runs.
type sock struct {
	conn net.Conn
	rc   syscall.RawConn

	// Scratch for the callbacks (made once: a closure per call would allocate).
	p       []byte
	n       int
	errno   syscall.Errno
	readFn  func(fd uintptr) bool
	writeFn func(fd uintptr) bool
}

func newSock(conn net.Conn) *sock {
	s := &sock{conn: conn}
	if sc, ok := conn.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			s.rc = rc
		}
	}
	s.readFn, s.writeFn = s.readOnce, s.writeOnce
	return s
}

// Read reads what the socket holds, waiting for it when it holds nothing.
func (s *sock) Read(p []byte) (int, error) {
	if s.rc == nil {
		return s.conn.Read(p)
	}
	if len(p) == 0 {
		return 0, nil
	}
	s.p, s.n, s.errno = p, 0, 0
	err := s.rc.Read(s.readFn)
	s.p = nil
	switch {
	case err != nil: // closed, or the deadline passed while waiting
		return 0, s.opError("read", err)
	case s.errno != 0:
		return 0, s.opError("read", os.NewSyscallError("read", s.errno))
	case s.n == 0:
		return 0, io.EOF
	}
	return s.n, nil
}

func (s *sock) readOnce(fd uintptr) bool {
	for {
		n, e := rawRead(fd, s.p)
		switch e {
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return false
		}
		s.n, s.errno = n, e
		return true
	}
}

// write writes all of b, waiting while the socket's send buffer is full.
func (s *sock) write(b []byte) error {
	if s.rc == nil {
		_, err := s.conn.Write(b)
		return err
	}
	s.p, s.errno = b, 0
	err := s.rc.Write(s.writeFn)
	s.p = nil
	switch {
	case err != nil:
		return s.opError("write", err)
	case s.errno != 0:
		return s.opError("write", os.NewSyscallError("write", s.errno))
	}
	return nil
}

func (s *sock) writeOnce(fd uintptr) bool {
	for len(s.p) > 0 {
		n, e := rawWrite(fd, s.p)
		switch e {
		case 0:
			s.p = s.p[n:]
		case unix.EINTR:
		case unix.EAGAIN:
			return false
		default:
			s.errno = e
			return true
		}
	}
	return true
}

// opError wraps err as net.Conn's Read and Write do, so that errors classify
// (see Classify) and print the same with either.
func (s *sock) opError(op string, err error) error {
	if _, ok := err.(*net.OpError); ok {
		return err
	}
	return &net.OpError{Op: op, Net: "tcp", Source: s.conn.LocalAddr(), Addr: s.conn.RemoteAddr(), Err: err}
}
