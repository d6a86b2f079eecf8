package attack

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// rawTransport makes rawClients: lean HTTP/1.1 keep-alive clients that each
// own one connection. It exists because, for small requests, net/http's
// client spends most of its CPU on pooling, header maps, goroutines per
// connection and allocation, which limits how much load one client core can
// produce (measured in loadtest/README.md, "Efficiency").
type rawTransport struct {
	ctx     context.Context
	addr    string
	dial    *dialer
	timeout time.Duration
	head    []byte // request line and fixed headers, without the final CRLF

	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

func newRawTransport(ctx context.Context, cfg TransportConfig, d *dialer) *rawTransport {
	// A Host or User-Agent among the extra headers replaces the generated
	// one: HTTP/1.1 allows one Host line (a server answers two with 400).
	host := cfg.URL.Host
	if v := cfg.Header.Get("Host"); v != "" {
		host = v
	}
	var h bytes.Buffer
	fmt.Fprintf(&h, "%s %s HTTP/1.1\r\nHost: %s\r\n", cfg.Method, cfg.URL.RequestURI(), host)
	if cfg.Header.Get("User-Agent") == "" {
		h.WriteString("User-Agent: orderlab-loadtest\r\n")
	}
	_ = cfg.Header.WriteSubset(&h, map[string]bool{"Host": true})
	return &rawTransport{
		ctx:     ctx,
		addr:    dialAddr(cfg.URL),
		dial:    d,
		timeout: cfg.Timeout,
		head:    h.Bytes(),
		conns:   make(map[net.Conn]struct{}),
	}
}

// NewClient returns a client that dials on its first request.
func (t *rawTransport) NewClient() Client {
	return &rawClient{t: t, buf: make([]byte, 0, 1024)}
}

// Close closes every open connection.
func (t *rawTransport) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for c := range t.conns {
		_ = c.Close()
	}
	clear(t.conns)
	return nil
}

func (t *rawTransport) track(c net.Conn, open bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if open {
		t.conns[c] = struct{}{}
	} else {
		delete(t.conns, c)
	}
}

// rawClient is one worker's HTTP/1.1 connection.
type rawClient struct {
	t    *rawTransport
	conn net.Conn
	sock *sock       // conn's reads and writes
	stop func() bool // unregisters the close-on-cancel hook
	br   *bufio.Reader
	buf  []byte
	read bool // some of the current response has arrived
	// deadlineSet is when the connection's deadline was last moved.
	deadlineSet time.Time
}

// Do writes req with one write and reads the response. When the server had
// already closed a reused keep-alive connection, Do retries once on a new
// connection, as net/http does for replayable requests.
func (c *rawClient) Do(req *Request) (Response, error) {
	c.buf = c.encode(c.buf[:0], req)
	reused := c.conn != nil
	resp, err := c.roundTrip()
	if err != nil && reused && !c.read && Classify(err) == ErrReset {
		c.closeConn()
		resp, err = c.roundTrip()
	}
	if err != nil {
		c.closeConn()
	}
	return resp, err
}

// Close closes the connection.
func (c *rawClient) Close() error {
	c.closeConn()
	return nil
}

func (c *rawClient) encode(b []byte, req *Request) []byte {
	b = append(b, c.t.head...)
	if len(req.IdempotencyKey) > 0 {
		b = append(b, "Idempotency-Key: "...)
		b = append(b, req.IdempotencyKey...)
		b = append(b, "\r\n"...)
	}
	if req.Attempt > 0 {
		b = append(b, RetryAttemptHeader+": "...)
		b = strconv.AppendInt(b, int64(req.Attempt), 10)
		b = append(b, "\r\n"...)
	}
	if req.Body != nil {
		b = append(b, "Content-Type: application/json\r\nContent-Length: "...)
		b = strconv.AppendInt(b, int64(len(req.Body)), 10)
		b = append(b, "\r\n\r\n"...)
		return append(b, req.Body...)
	}
	return append(b, "\r\n"...)
}

func (c *rawClient) roundTrip() (Response, error) {
	c.read = false
	if c.conn == nil {
		if err := c.dial(); err != nil {
			return Response{}, err
		}
	}
	if c.t.timeout > 0 {
		// Moving a deadline costs two runtime timer updates per request;
		// it moves only once a hundredth of the timeout has passed, so a
		// request times out after between 99 % and 100 % of it.
		if now := time.Now(); now.Sub(c.deadlineSet) >= c.t.timeout/100 {
			if err := c.conn.SetDeadline(now.Add(c.t.timeout)); err != nil {
				return Response{}, err
			}
			c.deadlineSet = now
		}
	}
	if err := c.sock.write(c.buf); err != nil {
		return Response{}, err
	}
	resp, keep, err := c.readResponse()
	if err == nil && !keep {
		c.closeConn()
	}
	return resp, err
}

func (c *rawClient) dial() error {
	if err := c.t.ctx.Err(); err != nil {
		return err
	}
	conn, err := c.t.dial.DialContext(c.t.ctx, "tcp", c.t.addr)
	if err != nil {
		return err
	}
	c.t.track(conn, true)
	c.conn, c.sock = conn, newSock(conn)
	c.deadlineSet = time.Time{} // a new connection has no deadline
	c.stop = context.AfterFunc(c.t.ctx, func() { _ = conn.Close() })
	if c.br == nil {
		c.br = bufio.NewReaderSize(c.sock, 8<<10)
	} else {
		c.br.Reset(c.sock)
	}
	return nil
}

func (c *rawClient) closeConn() {
	if c.conn == nil {
		return
	}
	c.stop()
	_ = c.conn.Close()
	c.t.track(c.conn, false)
	c.conn, c.sock = nil, nil
}

// readResponse reads one response (skipping interim 1xx ones), discards
// its body and reports whether the connection may be reused.
func (c *rawClient) readResponse() (resp Response, keep bool, err error) {
	for {
		line, err := c.line()
		if err != nil {
			return Response{}, false, err
		}
		if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
			return Response{}, false, fmt.Errorf("malformed status line %q", line)
		}
		status, err := strconv.Atoi(string(line[9:12])) // does not allocate
		if err != nil {
			return Response{}, false, fmt.Errorf("malformed status line %q", line)
		}
		resp = Response{Status: status}
		keep = line[7] == '1'
		length, chunked := int64(-1), false
		for {
			h, err := c.line()
			if err != nil {
				return Response{}, false, err
			}
			if len(h) == 0 {
				break
			}
			name, value, ok := bytes.Cut(h, []byte(":"))
			if !ok {
				continue
			}
			value = bytes.TrimSpace(value)
			switch {
			case bytes.EqualFold(name, []byte("Content-Length")):
				if length, err = strconv.ParseInt(string(value), 10, 64); err != nil || length < 0 {
					return Response{}, false, fmt.Errorf("malformed Content-Length %q", value)
				}
			case bytes.EqualFold(name, []byte("Transfer-Encoding")):
				chunked = containsFold(value, []byte("chunked"))
			case bytes.EqualFold(name, []byte("Retry-After")):
				resp.RetryAfter = parseRetryAfter(value, time.Now())
			case bytes.EqualFold(name, []byte("Connection")):
				if bytes.EqualFold(value, []byte("close")) {
					keep = false
				} else if bytes.EqualFold(value, []byte("keep-alive")) {
					keep = true
				}
			}
		}
		switch {
		case status >= 100 && status < 200 && status != http.StatusSwitchingProtocols:
			continue // interim response; the real one follows
		case status == http.StatusNoContent || status == http.StatusNotModified || status < 200:
			return resp, keep, nil
		case chunked:
			return resp, keep, c.discardChunked()
		case length >= 0:
			_, err := c.br.Discard(int(length))
			return resp, keep, err
		default: // the body runs until the server closes the connection
			_, err := io.Copy(io.Discard, c.br)
			return resp, false, err
		}
	}
}

// line returns the next CRLF- or LF-terminated line without its terminator.
func (c *rawClient) line() ([]byte, error) {
	b, err := c.br.ReadSlice('\n')
	if len(b) > 0 {
		c.read = true
	}
	if err != nil {
		if errors.Is(err, io.EOF) && !c.read {
			return nil, errServerClosed
		}
		if errors.Is(err, io.EOF) {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	b = b[:len(b)-1]
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b, nil
}

func (c *rawClient) discardChunked() error {
	for {
		line, err := c.line()
		if err != nil {
			return err
		}
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i]
		}
		size, err := strconv.ParseInt(string(bytes.TrimSpace(line)), 16, 64)
		if err != nil || size < 0 {
			return fmt.Errorf("malformed chunk size %q", line)
		}
		if size == 0 {
			for { // trailers, up to the blank line
				t, err := c.line()
				if err != nil {
					return err
				}
				if len(t) == 0 {
					return nil
				}
			}
		}
		if _, err := c.br.Discard(int(size) + 2); err != nil {
			return err
		}
	}
}

// containsFold reports whether s contains sub, ignoring ASCII case, without
// allocating (bytes.ToLower would copy s on every response).
func containsFold(s, sub []byte) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if bytes.EqualFold(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}

// dialAddr is the host and port to dial for u: its port, or 80 when it
// names none. An IPv6 literal ("[::1]") is bracketed once, not twice.
func dialAddr(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
	}
	return net.JoinHostPort(u.Hostname(), port)
}
