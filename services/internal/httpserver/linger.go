package httpserver

import (
	"io"
	"net"
	"sync/atomic"
	"time"
)

// A server that closes a connection while the client is still sending
// (an answer to a request it did not read in full: a 413 for a body over
// the limit, a 431, a timeout) leaves unread bytes in the socket, and the
// kernel answers them with a reset. A client that writes its whole request
// before it reads then sees ECONNRESET, not the answer. Both servers close
// such a connection the way nginx's lingering close does: they send their
// FIN after the answer, then read and discard at most LingerBytes for at
// most LingerTimeout, so that the client's writes complete and it reads
// the answer; then they close (docs/reference/http-servers.md, Limits).
const (
	LingerBytes   = 8 << 20
	LingerTimeout = 2 * time.Second
)

// lingerListener gives net/http connections that close lingering when a
// request is in progress.
type lingerListener struct{ net.Listener }

func (l lingerListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &lingerConn{Conn: c}, nil
}

// lingerConn is a net/http connection. midRequest is set while a request
// is being read or answered (net/http's StateActive): a close then is the
// server giving up on a request whose bytes may still arrive.
type lingerConn struct {
	net.Conn
	midRequest atomic.Bool
}

// CloseWrite lets net/http send its FIN (it looks for this method).
func (c *lingerConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// Close closes at once a connection between requests, and lingers on one
// closed mid-request. It runs on the connection's own goroutine (net/http
// closes idle connections at Shutdown from another, and those never linger).
func (c *lingerConn) Close() error {
	if c.midRequest.Swap(false) {
		_ = c.CloseWrite()
		_ = c.SetReadDeadline(time.Now().Add(LingerTimeout))
		_, _ = io.CopyN(io.Discard, c.Conn, LingerBytes)
	}
	return c.Conn.Close()
}
