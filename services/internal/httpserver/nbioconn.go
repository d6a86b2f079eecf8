package httpserver

import (
	"cmp"
	"net"
	"sync/atomic"
	"time"

	"github.com/lesismal/nbio/nbhttp"
)

// headerSlack is what net/http reads beyond MaxHeaderBytes before it
// answers 431 (its bufio slack); nbio gets the same.
const headerSlack = 4096

// The answers nbio's guard writes itself before it closes a connection,
// worded as net/http words its own.
const (
	answerHeaderTooLarge = "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n431 Request Header Fields Too Large"
	answerBodyTooLarge   = "HTTP/1.1 413 Request Entity Too Large\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n413 Request Entity Too Large"
)

// Which read deadline a connection has armed for the request being read.
const (
	noDeadline = iota
	headerDeadline
	requestDeadline
)

// nbioConn is what the nbio server keeps of one connection. Without a
// goroutine of its own, this and nbhttp's parser are all that an idle
// connection costs (besides its socket).
type nbioConn struct {
	conn   net.Conn // the *nbio.Conn
	opened time.Time
	// busy counts the connection's requests in progress: being read,
	// queued for the handler pool or handled, until the answer is written.
	// Zero: the connection is idle.
	busy   atomic.Int32
	served atomic.Bool // a request was read in full
	// queued is when the request now handled was read in full; the
	// handler's goroutine's only.
	queued time.Time

	// The request being read; the poller goroutine's only.
	reading     bool
	start       time.Time // its first byte
	headerBytes int
	headersDone bool
	deadline    int8        // which deadline the timer is armed for
	timer       *time.Timer // closes the connection when the deadline passes
	rejected    bool        // answered 431 or 413; the connection is closing
}

// armDeadline gives the request being read what net/http gives it: its
// headers within ReadHeaderTimeout, and all of it within ReadTimeout, of
// its first byte; the connection closes when the deadline passes. The
// timer is the connection's own, not nbio's read deadline, which nbhttp
// sets to KeepaliveTime from the goroutine that accepted the connection
// and may do so after the first request has arrived.
func (c *nbioConn) armDeadline(lim Limits) {
	which, d := int8(requestDeadline), lim.ReadTimeout
	if !c.headersDone {
		which, d = headerDeadline, cmp.Or(lim.ReadHeaderTimeout, lim.ReadTimeout)
	}
	if d <= 0 || c.deadline == which {
		return
	}
	c.deadline = which
	left := time.Until(c.start.Add(d))
	if c.timer == nil {
		c.timer = time.AfterFunc(left, func() { _ = c.conn.Close() })
	} else {
		c.timer.Reset(left)
	}
}

// disarm stops the deadline of a request read in full.
func (c *nbioConn) disarm() {
	if c.deadline != noDeadline {
		c.timer.Stop()
		c.deadline = noDeadline
	}
}

// guard stands in front of nbhttp's parser callbacks for one connection
// (nbhttp.Processor). It counts the header bytes, turns away what is too
// large, and clears the read deadline when a request is read in full.
// Its callbacks run on the poller goroutine.
type guard struct {
	nbhttp.Processor
	s  *nbioServer
	st *nbioConn
}

func (g *guard) OnMethod(p *nbhttp.Parser, method string) {
	if !g.st.reading { // a second request in the same read
		g.s.beginRequest(g.st)
	}
	g.st.headerBytes += len(method) + 1
	g.Processor.OnMethod(p, method)
}

func (g *guard) OnURL(p *nbhttp.Parser, uri string) error {
	g.st.headerBytes += len(uri) + 1
	return g.Processor.OnURL(p, uri)
}

func (g *guard) OnProto(p *nbhttp.Parser, proto string) error {
	g.st.headerBytes += len(proto) + 2
	return g.Processor.OnProto(p, proto)
}

func (g *guard) OnHeader(p *nbhttp.Parser, key, value string) {
	g.st.headerBytes += len(key) + len(value) + 4
	if lim := g.s.lim.MaxHeaderBytes; lim > 0 && g.st.headerBytes > lim+headerSlack {
		g.reject(answerHeaderTooLarge)
	}
	g.Processor.OnHeader(p, key, value)
}

// OnContentLength ends the headers (n is -1 without a Content-Length).
func (g *guard) OnContentLength(p *nbhttp.Parser, n int) {
	g.st.headersDone = true
	if lim := g.s.lim.MaxBufferedBody; lim > 0 && n > lim {
		g.reject(answerBodyTooLarge)
	}
	g.Processor.OnContentLength(p, n)
}

// OnComplete: the request is read in full. Its deadline stops, and so does
// nbhttp's idle deadline (KeepaliveTime from the last answer), so that a
// long handler keeps its connection; nbhttp sets the idle deadline again
// after the answer. Then nbhttp queues the handler.
func (g *guard) OnComplete(p *nbhttp.Parser) {
	st := g.st
	st.reading = false
	st.disarm()
	if st.rejected {
		g.Processor.Clean(p)
		return
	}
	st.served.Store(true)
	_ = st.conn.SetReadDeadline(time.Time{})
	g.Processor.OnComplete(p)
}

// reject answers the request being read itself and closes the connection;
// the request never reaches the handler.
func (g *guard) reject(answer string) {
	if g.st.rejected {
		return
	}
	g.st.rejected = true
	_, _ = g.st.conn.Write([]byte(answer))
	_ = g.st.conn.Close()
}
