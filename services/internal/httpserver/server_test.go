package httpserver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/goleak"

	"github.com/orderlab/orderlab/internal/metrictest"
	"github.com/orderlab/orderlab/internal/poll"
	"github.com/orderlab/orderlab/internal/proc"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testServer is a server of one kind on a loopback port.
type testServer struct {
	Server
	reg    *prometheus.Registry
	served chan error
}

var testLimits = Limits{
	ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second,
	IdleTimeout: time.Minute, MaxHeaderBytes: 16 << 10, MaxBufferedBody: 256 << 10,
}

// start serves h with a server of kind; it is shut down when t ends.
func start(t *testing.T, kind Kind, lim Limits, pool int, h http.Handler) *testServer {
	t.Helper()
	return startConfig(t, Config{Kind: kind, Limits: lim, HandlerPool: pool}, h)
}

// startConfig is start with the whole Config (its Registry and Log are the test's).
func startConfig(t *testing.T, cfg Config, h http.Handler) *testServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	cfg.Registry, cfg.Log = reg, slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := New(cfg, ln, h)
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{Server: srv, reg: reg, served: make(chan error, 1)}
	go func() { ts.served <- srv.Serve() }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := poll.Recv(t, answerWithin, "Serve's return", ts.served); err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return ts
}

// metrics reads the server's registry.
func (ts *testServer) metrics(t *testing.T) metrictest.Families {
	t.Helper()
	return metrictest.Gather(t, ts.reg)
}

// await waits (at most 10 s) until the server's gauges have the values of
// want (by "name" or "name{label=value}"): a state the server reaches on
// its own goroutines, not a bound on how fast.
func (ts *testServer) await(t *testing.T, what string, want map[string]float64) {
	t.Helper()
	poll.Until(t, 10*time.Second, what, func() error {
		m := ts.metrics(t)
		for series, v := range want {
			name, label, _ := strings.Cut(strings.TrimSuffix(series, "}"), "{")
			var match map[string]string
			if k, val, ok := strings.Cut(label, "="); ok {
				match = map[string]string{k: val}
			}
			if got := m.Value(name, match); got != v {
				return fmt.Errorf("%s = %v, want %v", series, got, v)
			}
		}
		return nil
	})
}

// client is one raw keep-alive connection.
type client struct {
	net.Conn
	r *bufio.Reader
}

func dial(t *testing.T, s Server) *client {
	t.Helper()
	c, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &client{Conn: c, r: bufio.NewReader(c)}
}

// do sends a request and reads its answer, body included.
func (c *client) do(t *testing.T, method, path string) (*http.Response, string) {
	t.Helper()
	resp, body, err := c.try(method, path)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp, body
}

// try is do for a goroutine other than the test's: it returns the error.
func (c *client) try(method, path string) (*http.Response, string, error) {
	req, _ := http.NewRequest(method, "http://test"+path, nil)
	if err := req.Write(c); err != nil {
		return nil, "", err
	}
	resp, err := http.ReadResponse(c.r, req)
	if err != nil {
		return nil, "", err
	}
	body, err := io.ReadAll(resp.Body)
	return resp, string(body), err
}

// closedByServer reports whether the server closed c: a read ends with EOF
// or a reset rather than the test's own deadline.
func (c *client) closedByServer() bool {
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := io.Copy(io.Discard, c.r)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

func hello(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, "hello %s", r.URL.Path) }

func TestServesKeepAliveAndCountsConnections(t *testing.T) {
	for _, kind := range Kinds {
		t.Run(string(kind), func(t *testing.T) {
			ts := start(t, kind, testLimits, 0, http.HandlerFunc(hello))
			c := dial(t, ts)
			for _, p := range []string{"/a", "/b"} {
				resp, body := c.do(t, "GET", p)
				if resp.StatusCode != 200 || body != "hello "+p {
					t.Fatalf("GET %s = %d %q", p, resp.StatusCode, body)
				}
			}
			ts.await(t, "one idle connection", map[string]float64{
				"orderlab_http_connections{state=idle}": 1, "orderlab_http_connections{state=active}": 0,
			})
			c.Close()
			ts.await(t, "no connection", map[string]float64{"orderlab_http_connections{state=idle}": 0})
		})
	}
}

// answerWithin bounds a test's wait for the server (a handler entered, an
// answer, Serve or Shutdown returning): far above what it takes on a busy
// machine, so that running out means it never came.
const answerWithin = 10 * time.Second

// blocker is a handler that waits until released, and says when it runs.
type blocker struct {
	entered chan string
	release chan struct{}
}

func newBlocker() *blocker {
	return &blocker{entered: make(chan string, 16), release: make(chan struct{})}
}

func (b *blocker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.entered <- r.URL.Path
	<-b.release
	fmt.Fprint(w, "released")
}

func TestActiveConnectionsAndHandlerPool(t *testing.T) {
	for _, kind := range Kinds {
		t.Run(string(kind), func(t *testing.T) {
			b := newBlocker()
			ts := start(t, kind, testLimits, 1, b) // nbio: one handler goroutine
			answers := make(chan string, 2)
			for _, p := range []string{"/first", "/second"} {
				c := dial(t, ts)
				go func() { _, body, _ := c.try("GET", p); answers <- body }()
				if p == "/first" {
					poll.Recv(t, answerWithin, "the first request in its handler", b.entered)
				}
			}
			ts.await(t, "two active connections", map[string]float64{"orderlab_http_connections{state=active}": 2})
			if kind == NBIO {
				ts.await(t, "one busy handler, one request queued", map[string]float64{
					"orderlab_http_handler_pool_busy": 1, "orderlab_http_handler_pool_queued": 1,
				})
				if v := ts.metrics(t).Value("orderlab_http_handler_pool_size", nil); v != 1 {
					t.Errorf("pool size = %v, want 1", v)
				}
			}
			close(b.release)
			for range 2 {
				if body := poll.Recv(t, answerWithin, "an answer once released", answers); body != "released" {
					t.Errorf("answer %q", body)
				}
			}
		})
	}
}

// A drain lets the request in flight finish (its answer says
// Connection: close), closes idle connections and refuses new ones.
func TestShutdownDrainsInFlightRequests(t *testing.T) {
	for _, kind := range Kinds {
		t.Run(string(kind), func(t *testing.T) {
			b := newBlocker()
			ts := start(t, kind, testLimits, 0, b)
			idle := dial(t, ts)
			go func() { b.release <- struct{}{} }()
			if resp, _ := idle.do(t, "GET", "/warm"); resp.StatusCode != 200 {
				t.Fatalf("warm-up = %d", resp.StatusCode)
			}
			poll.Recv(t, answerWithin, "the warm-up in its handler", b.entered)

			busy := dial(t, ts)
			answer := make(chan *http.Response, 1)
			go func() {
				resp, _, err := busy.try("GET", "/slow")
				if err != nil {
					resp = &http.Response{Status: err.Error()}
				}
				answer <- resp
			}()
			poll.Recv(t, answerWithin, "the slow request in its handler", b.entered)

			shut := make(chan error, 1)
			go func() { shut <- ts.Shutdown(context.Background()) }()
			if !idle.closedByServer() {
				t.Fatal("the idle connection stayed open during the drain")
			}
			poll.Until(t, 10*time.Second, "new connections refused", func() error {
				c, err := net.Dial("tcp", ts.Addr().String())
				if err != nil {
					return nil
				}
				c.Close()
				return errors.New("a new connection was accepted")
			})
			select {
			case err := <-shut:
				t.Fatalf("Shutdown returned (%v) while a request was in flight", err)
			default:
			}
			close(b.release)
			resp := poll.Recv(t, answerWithin, "the answer in flight", answer)
			if resp.StatusCode != 200 || !resp.Close {
				t.Errorf("answer in flight = %d %s, Connection: close %v; want 200 and close", resp.StatusCode, resp.Status, resp.Close)
			}
			if err := poll.Recv(t, answerWithin, "Shutdown's return", shut); err != nil {
				t.Errorf("Shutdown = %v", err)
			}
			if err := poll.Recv(t, answerWithin, "Serve's return", ts.served); err != nil {
				t.Errorf("Serve = %v", err)
			}
			ts.served <- nil // for the cleanup's second Shutdown
		})
	}
}

// An answer to HEAD has no body: the next request on the connection reads
// cleanly.
func TestHeadAnswersWithoutBody(t *testing.T) {
	for _, kind := range Kinds {
		t.Run(string(kind), func(t *testing.T) {
			ts := start(t, kind, testLimits, 0, http.HandlerFunc(hello))
			c := dial(t, ts)
			if resp, body := c.do(t, "HEAD", "/h"); resp.StatusCode != 200 || body != "" {
				t.Fatalf("HEAD = %d %q", resp.StatusCode, body)
			}
			if resp, body := c.do(t, "GET", "/after"); resp.StatusCode != 200 || !strings.HasPrefix(body, "hello /after") {
				t.Fatalf("GET after HEAD = %d %q", resp.StatusCode, body)
			}
		})
	}
}

// nbio's default pool has a goroutine for every descriptor the process may
// open (each request in flight holds one), so that no request read in full
// waits for a goroutine; HTTP_HANDLER_POOL still sets it.
func TestNBIODefaultPoolFollowsOpenFiles(t *testing.T) {
	files, err := proc.OpenFiles()
	if err != nil {
		t.Fatal(err)
	}
	want := max(1024*runtime.GOMAXPROCS(0), min(files, maxDefaultHandlerPool))
	for _, c := range []struct{ pool, want int }{{0, want}, {7, 7}} {
		ts := start(t, NBIO, testLimits, c.pool, http.HandlerFunc(hello))
		// One answer first: the engine's pollers are then running, so that
		// the shutdown at the end stops a started engine (under -race, an
		// nbio engine stopped right after its start was seen to hang).
		if resp, _ := dial(t, ts).do(t, http.MethodGet, "/"); resp.StatusCode != http.StatusOK {
			t.Fatalf("GET / = %d", resp.StatusCode)
		}
		if v := ts.metrics(t).Value("orderlab_http_handler_pool_size", nil); v != float64(c.want) {
			t.Errorf("HandlerPool %d: pool size = %v, want %d (open files %d)", c.pool, v, c.want, files)
		}
	}
}
