package attack

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// connCounter counts the connections a test server accepted.
type connCounter struct{ n atomic.Int64 }

func (c *connCounter) hook(_ net.Conn, s http.ConnState) {
	if s == http.StateNew {
		c.n.Add(1)
	}
}

func newServer(t *testing.T, h http.Handler) (*httptest.Server, *connCounter) {
	t.Helper()
	var cc connCounter
	s := httptest.NewUnstartedServer(h)
	s.Config.ConnState = cc.hook
	s.Start()
	t.Cleanup(s.Close)
	return s, &cc
}

func newTestTransport(t *testing.T, kind ClientKind, rawURL, method string) Transport {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := NewTransport(context.Background(), TransportConfig{Kind: kind, Method: method, URL: u, Conns: 4, Header: http.Header{"X-Test": {"yes"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	return tr
}

// TestClientsReadEveryResponseFraming sends one client through responses
// with a Content-Length, a chunked body, no body, a rejection and
// Connection: close (the server answers the cases in order), and checks the
// statuses, that the query passes through and that keep-alive connections
// are reused.
func TestClientsReadEveryResponseFraming(t *testing.T) {
	cases := []struct {
		kind string
		want Response
	}{
		{"plain", Response{Status: 200}}, {"chunked", Response{Status: 200}}, {"empty", Response{Status: 204}},
		{"reject", Response{Status: 429, RetryAfter: 7 * time.Second}}, {"plain", Response{Status: 200}},
		{"close", Response{Status: 418}}, {"plain", Response{Status: 200}},
	}
	for _, kind := range []ClientKind{ClientFast, ClientNetHTTP} {
		t.Run(string(kind), func(t *testing.T) {
			var next atomic.Int64
			s, conns := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("X-Test") != "yes" || r.URL.RequestURI() != "/work/db?delay=20ms" {
					t.Errorf("header %q, URI %q", r.Header.Get("X-Test"), r.URL.RequestURI())
				}
				switch cases[next.Add(1)-1].kind {
				case "chunked":
					for range 3 {
						_, _ = w.Write([]byte(strings.Repeat("x", 5000)))
						w.(http.Flusher).Flush()
					}
				case "empty":
					w.WriteHeader(http.StatusNoContent)
				case "close":
					w.Header().Set("Connection", "close")
					w.WriteHeader(http.StatusTeapot)
				case "reject":
					w.Header().Set("Retry-After", "7")
					http.Error(w, "busy", http.StatusTooManyRequests)
				default:
					_, _ = w.Write([]byte("hello"))
				}
			}))
			c := newTestTransport(t, kind, s.URL+"/work/db?delay=20ms", "GET").NewClient()
			defer c.Close()
			for _, tc := range cases {
				got, err := c.Do(&Request{})
				if err != nil || got != tc.want {
					t.Fatalf("%s: %+v, %v; want %+v", tc.kind, got, err, tc.want)
				}
			}
			// One connection until the server closed it after "close", then one more.
			if n := conns.n.Load(); n != 2 {
				t.Errorf("opened %d connections, want 2 (keep-alive reuse)", n)
			}
		})
	}
}

func TestFastClientRetriesAConnectionTheServerClosed(t *testing.T) {
	s, conns := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) }))
	c := newTestTransport(t, ClientFast, s.URL+"/", "GET").NewClient()
	defer c.Close()
	if r, err := c.Do(&Request{}); err != nil || r.Status != 200 {
		t.Fatalf("first: %d, %v", r.Status, err)
	}
	s.CloseClientConnections() // the idle keep-alive connection dies
	if r, err := c.Do(&Request{}); err != nil || r.Status != 200 {
		t.Fatalf("after the server closed the connection: %d, %v", r.Status, err)
	}
	if n := conns.n.Load(); n != 2 {
		t.Errorf("opened %d connections, want 2", n)
	}
}

func TestPostSendsAnOrderAndAnIdempotencyKey(t *testing.T) {
	for _, kind := range []ClientKind{ClientFast, ClientNetHTTP} {
		t.Run(string(kind), func(t *testing.T) {
			type order struct {
				CustomerID string `json:"customer_id"`
				Items      []struct {
					SKU            string `json:"sku"`
					Quantity       int    `json:"quantity"`
					UnitPriceCents int    `json:"unit_price_cents"`
				} `json:"items"`
			}
			var mu sync.Mutex
			keys := map[string]bool{}
			s, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var o order
				body, _ := io.ReadAll(r.Body)
				if r.Method != "POST" || r.Header.Get("Content-Type") != "application/json" || json.Unmarshal(body, &o) != nil ||
					!strings.HasPrefix(o.CustomerID, "c-") || len(o.Items) < 1 || len(o.Items) > 5 || o.Items[0].Quantity < 1 || o.Items[0].UnitPriceCents <= 0 {
					t.Errorf("bad order %s %q", r.Method, body)
					w.WriteHeader(http.StatusBadRequest)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				k := r.Header.Get("Idempotency-Key")
				if k == "" || keys[k] {
					t.Errorf("Idempotency-Key %q missing or repeated", k)
				}
				keys[k] = true
				w.WriteHeader(http.StatusCreated)
			}))
			a, err := New(Config{Mode: ModeClosed, Concurrency: 3, Requests: 60, Target: Target{Method: "POST", URL: s.URL + "/orders", Body: OrderBody}, Client: kind})
			if err != nil {
				t.Fatal(err)
			}
			res, err := a.Run(context.Background())
			if err != nil || res.Status[201] != 60 {
				t.Fatalf("status %v errors %v, %v; want 60 × 201", res.Status, res.Errors, err)
			}
			if len(keys) != 60 {
				t.Errorf("%d distinct keys, want 60", len(keys))
			}
		})
	}
}

// TestHostHeaderReplacesTheURLHost: -H 'Host: …' (and 'User-Agent: …')
// take the generated header's place. With two Host lines Go's server
// answers 400; net/http's client ignores a Host in the header map.
func TestHostHeaderReplacesTheURLHost(t *testing.T) {
	for _, kind := range []ClientKind{ClientFast, ClientNetHTTP} {
		t.Run(string(kind), func(t *testing.T) {
			s, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Host != "orders.example" || r.UserAgent() != "probe/1" || len(r.Header.Values("User-Agent")) != 1 {
					t.Errorf("Host %q, User-Agent %q", r.Host, r.Header.Values("User-Agent"))
				}
			}))
			u, _ := url.Parse(s.URL + "/")
			tr, err := NewTransport(context.Background(), TransportConfig{Kind: kind, URL: u, Conns: 1,
				Header: http.Header{"Host": {"orders.example"}, "User-Agent": {"probe/1"}}})
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			c := tr.NewClient()
			defer c.Close()
			if r, err := c.Do(&Request{}); err != nil || r.Status != 200 {
				t.Errorf("status %d, %v; want 200 (one Host header)", r.Status, err)
			}
		})
	}
}

// TestRedirectsAreAnswersNotFollowed: a 302 is the answer to the request
// sent; following it would send a second, uncounted request.
func TestRedirectsAreAnswersNotFollowed(t *testing.T) {
	for _, kind := range []ClientKind{ClientFast, ClientNetHTTP} {
		t.Run(string(kind), func(t *testing.T) {
			var followed atomic.Int64
			s, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/elsewhere" {
					followed.Add(1)
					return
				}
				http.Redirect(w, r, "/elsewhere", http.StatusFound)
			}))
			c := newTestTransport(t, kind, s.URL+"/work/db?delay=20ms", "GET").NewClient()
			defer c.Close()
			if r, err := c.Do(&Request{}); err != nil || r.Status != http.StatusFound || followed.Load() != 0 {
				t.Errorf("status %d, %v, redirect followed %d times; want 302 and none", r.Status, err, followed.Load())
			}
		})
	}
}

func TestDialAddrAddsTheDefaultPortOnce(t *testing.T) {
	for raw, want := range map[string]string{
		"http://[::1]/":          "[::1]:80",
		"http://[::1]:8081/":     "[::1]:8081",
		"http://127.0.0.1/":      "127.0.0.1:80",
		"http://127.0.0.1:9091/": "127.0.0.1:9091",
		"http://localhost/x":     "localhost:80",
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := dialAddr(u); got != want {
			t.Errorf("dialAddr(%s) = %q, want %q", raw, got, want)
		}
	}
	// And end to end: the fast client reaches a server on [::1].
	l, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	s.Listener.Close()
	s.Listener = l
	s.Start()
	defer s.Close()
	c := newTestTransport(t, ClientFast, s.URL+"/", "GET").NewClient()
	defer c.Close()
	if r, err := c.Do(&Request{}); err != nil || r.Status != 200 {
		t.Errorf("[::1]: status %d, %v", r.Status, err)
	}
}

// TestReadResponseDoesNotAllocate guards the fast client's promise
// (loadtest/README.md, Efficiency): parsing an answer, plain or chunked, allocates
// nothing.
func TestReadResponseDoesNotAllocate(t *testing.T) {
	for name, resp := range map[string]string{
		"plain":   "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok",
		"chunked": "HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
	} {
		c := &rawClient{br: bufio.NewReaderSize(strings.NewReader(strings.Repeat(resp, 200)), 8<<10)}
		if n := testing.AllocsPerRun(100, func() {
			if _, _, err := c.readResponse(); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("%s: %v allocations per response, want 0", name, n)
		}
	}
}

// TestFastClientClassifiesTransportErrors: the fast client's socket reads
// and writes (raw system calls on Linux) fail as net.Conn's do, so that a
// server that never answers is a timeout, and one that resets the
// connection or closes it in the middle of an answer is a reset.
func TestFastClientClassifiesTransportErrors(t *testing.T) {
	for _, c := range []struct {
		name  string
		serve func(net.Conn)
		want  ErrClass
	}{
		{"silent", func(net.Conn) {}, ErrTimeout},
		{"reset", func(c net.Conn) { _ = c.(*net.TCPConn).SetLinger(0); _ = c.Close() }, ErrReset},
		{"half an answer", func(c net.Conn) {
			_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nok")
			_ = c.Close()
		}, ErrReset},
	} {
		t.Run(c.name, func(t *testing.T) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			done := make(chan struct{})
			go func() {
				defer close(done)
				conn, err := l.Accept()
				if err != nil {
					return
				}
				defer conn.Close()
				if _, err := http.ReadRequest(bufio.NewReader(conn)); err != nil {
					return
				}
				c.serve(conn)
				if c.want == ErrTimeout {
					_, _ = io.Copy(io.Discard, conn) // until the client gives up
				}
			}()
			u, _ := url.Parse("http://" + l.Addr().String() + "/")
			tr, err := NewTransport(context.Background(), TransportConfig{Kind: ClientFast, URL: u, Conns: 1, Timeout: 100 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			cl := tr.NewClient()
			_, err = cl.Do(&Request{})
			_ = cl.Close()
			_ = tr.Close()
			<-done
			if err == nil || Classify(err) != c.want {
				t.Errorf("error %v (class %v), want class %v", err, Classify(err), c.want)
			}
		})
	}
}
