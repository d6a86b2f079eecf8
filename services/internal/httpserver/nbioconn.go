package httpserver

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/lesismal/nbio/nbhttp"
)

// headerSlack is what net/http reads beyond MaxHeaderBytes before it
// answers 431 (its bufio slack); nbio gets the same.
const headerSlack = 4096

// MaxPipelined bounds, under nbio, the requests of one connection read and
// not yet answered. nbio reads a connection's requests as fast as they
// come and queues each for the handler pool, so a client that pipelines
// requests and never reads the answers would queue them without end; past
// this many, the connection closes. (net/http reads a connection's next
// request only once the last is answered.)
const MaxPipelined = 32

// The answers nbio's guard writes itself before it closes a connection,
// worded as net/http words its own; Config.BodyTooLarge replaces the 413's
// plain text.
func rawAnswer(status, contentType, body string) []byte {
	return []byte(fmt.Sprintf("HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		status, contentType, len(body), body))
}

var answerHeaderTooLarge = rawAnswer("431 Request Header Fields Too Large", "text/plain; charset=utf-8", "431 Request Header Fields Too Large")

func answerBodyTooLarge(problem []byte) []byte {
	if len(problem) == 0 {
		return rawAnswer("413 Request Entity Too Large", "text/plain; charset=utf-8", "413 Request Entity Too Large")
	}
	return rawAnswer("413 Request Entity Too Large", "application/problem+json", string(problem))
}

// Which read deadline a connection has armed for the request being read.
const (
	noDeadline = iota
	headerDeadline
	requestDeadline
	lingerDeadline // rejected: the connection closes at LingerTimeout
)

// nbioConn is what the nbio server keeps of one connection. Without a
// goroutine of its own, this and nbhttp's parser are all that an idle
// connection costs (besides its socket).
type nbioConn struct {
	conn   net.Conn // the *nbio.Conn
	opened time.Time
	// ctx is Config.ConnContext's context for this connection, or nil:
	// its requests' contexts derive from it.
	ctx context.Context
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
	headerBytes int       // counted by the guard, line by line
	headerRead  int       // read while the headers were incomplete
	headersDone bool
	deadline    int8        // which deadline the timer is armed for
	timer       *time.Timer // closes the connection when the deadline passes
	rejected    bool        // answered 431 or 413; the connection is closing
	discarded   int         // bytes discarded since (linger.go)
}

// armDeadline gives the request being read what net/http gives it: its
// headers within ReadHeaderTimeout, and all of it within ReadTimeout, of
// its first byte; the connection closes when the deadline passes. The
// timer is the connection's own, not nbio's read deadline, which nbhttp
// sets to KeepaliveTime from the goroutine that accepted the connection
// and may do so after the first request has arrived.
func (c *nbioConn) armDeadline(lim Limits) {
	if c.rejected {
		return
	}
	which, d := int8(requestDeadline), lim.ReadTimeout
	if !c.headersDone {
		which, d = headerDeadline, cmp.Or(lim.ReadHeaderTimeout, lim.ReadTimeout)
	}
	if d <= 0 || c.deadline == which {
		return
	}
	c.closeAt(which, time.Until(c.start.Add(d)))
}

// closeAt arms the connection's timer to close it after left.
func (c *nbioConn) closeAt(which int8, left time.Duration) {
	c.deadline = which
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
		g.st.reject(answerHeaderTooLarge)
	}
	g.Processor.OnHeader(p, key, value)
}

// OnContentLength ends the headers (n is -1 without a Content-Length).
func (g *guard) OnContentLength(p *nbhttp.Parser, n int) {
	g.st.headersDone = true
	if lim := g.s.lim.MaxBufferedBody; lim > 0 && n > lim {
		g.st.reject(g.s.tooLarge)
	}
	g.Processor.OnContentLength(p, n)
}

// OnComplete: the request is read in full. Its deadline stops, and so does
// nbhttp's idle deadline (KeepaliveTime from the last answer), so that a
// long handler keeps its connection; nbhttp sets the idle deadline again
// after the answer. Then nbhttp queues the handler.
func (g *guard) OnComplete(p *nbhttp.Parser) {
	st := g.st
	if st.rejected { // it lingers until closed
		g.Processor.Clean(p)
		return
	}
	st.reading = false
	st.disarm()
	st.served.Store(true)
	_ = st.conn.SetReadDeadline(time.Time{})
	g.Processor.OnComplete(p)
}

// reject answers the request being read itself and closes the connection
// lingering (linger.go): what the client still sends is discarded (onData),
// up to LingerBytes, and the connection closes then, or after
// LingerTimeout, or when the client closes it. The request never reaches
// the handler. nbio has no half-close, so the client sees the end of the
// answer by its Content-Length, and the connection's end later.
func (c *nbioConn) reject(answer []byte) {
	if c.rejected {
		return
	}
	c.rejected = true
	_, _ = c.conn.Write(answer)
	c.closeAt(lingerDeadline, LingerTimeout)
}

// discard counts n bytes a rejected connection sent after its answer, and
// closes it once they reach LingerBytes.
func (c *nbioConn) discard(n int) {
	c.discarded += n
	if c.discarded >= LingerBytes {
		_ = c.conn.Close()
	}
}
