package httpserver

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/orderlab/orderlab/internal/poll"
)

// Short limits, so that the tests see them act; each test waits for the
// server to act, never for a wall-clock bound. The idle timeout is longer
// than a test waits for a connection to close (10 s), so that only the
// limit under test can close it; idleLimits shortens it.
var (
	shortLimits = Limits{
		ReadHeaderTimeout: 100 * time.Millisecond, ReadTimeout: 300 * time.Millisecond, WriteTimeout: 10 * time.Second,
		IdleTimeout: time.Minute, MaxHeaderBytes: 1 << 10, MaxBufferedBody: 1 << 10,
	}
	idleLimits = func() Limits { l := shortLimits; l.IdleTimeout = time.Second; return l }()
)

// echo answers with the body it read, or 400 when reading it failed.
func echo(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if d, err := time.ParseDuration(r.URL.Query().Get("sleep")); err == nil {
		time.Sleep(d)
	}
	fmt.Fprintf(w, "got %q", b)
}

// noOK reads whatever the server still sends on c until it closes c, and
// fails the test when that is a 200 or the server never closes.
func noOK(t *testing.T, c *client, what string) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if resp, err := http.ReadResponse(c.r, nil); err == nil && resp.StatusCode == http.StatusOK {
		t.Fatalf("%s: answered 200", what)
	}
	if !c.closedByServer() {
		t.Fatalf("%s: the connection stayed open", what)
	}
}

func TestLimits(t *testing.T) {
	for _, kind := range Kinds {
		t.Run(string(kind), func(t *testing.T) {
			ts := start(t, kind, shortLimits, 0, http.HandlerFunc(echo))
			idle := start(t, kind, idleLimits, 0, http.HandlerFunc(echo))

			t.Run("headers not finished within ReadHeaderTimeout", func(t *testing.T) {
				c := dial(t, ts)
				fmt.Fprint(c, "GET / HTTP/1.1\r\nHost: test\r\n")
				noOK(t, c, "slow headers")
			})
			t.Run("body not finished within ReadTimeout", func(t *testing.T) {
				c := dial(t, ts)
				fmt.Fprint(c, "POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 10\r\n\r\n12345")
				noOK(t, c, "slow body")
			})
			t.Run("idle beyond IdleTimeout", func(t *testing.T) {
				c := dial(t, idle)
				if resp, _ := c.do(t, "GET", "/"); resp.StatusCode != 200 {
					t.Fatalf("GET = %d", resp.StatusCode)
				}
				if !c.closedByServer() {
					t.Fatal("the idle connection stayed open")
				}
			})
			t.Run("a handler outlives IdleTimeout and ReadTimeout on its connection", func(t *testing.T) {
				c := dial(t, idle)
				if resp, _ := c.do(t, "GET", "/"); resp.StatusCode != 200 {
					t.Fatalf("GET = %d", resp.StatusCode)
				}
				// Sent at once on the kept-alive connection, whose idle
				// timer started with the first answer: the handler runs
				// past that idle deadline and past its own ReadTimeout.
				// A server that let either close the connection under a
				// handler fails this however fast or slow the machine.
				sleep := idleLimits.IdleTimeout + idleLimits.ReadTimeout
				if resp, body := c.do(t, "GET", "/?sleep="+sleep.String()); resp.StatusCode != 200 || body != `got ""` {
					t.Fatalf("slow GET = %d %q", resp.StatusCode, body)
				}
			})
			t.Run("headers over MaxHeaderBytes", func(t *testing.T) {
				c := dial(t, ts)
				big := strings.Repeat("x", shortLimits.MaxHeaderBytes+headerSlack+100)
				fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: test\r\nX-Big: %s\r\n\r\n", big)
				resp, err := http.ReadResponse(bufio.NewReader(c), nil)
				if err != nil || resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
					t.Fatalf("big headers: %v %v, want 431", resp, err)
				}
			})
		})
	}
}

// nbio reads a whole body before the handler runs, so it bounds what it
// buffers: a larger Content-Length is answered 413 without being read.
func TestNBIOBufferedBodyLimit(t *testing.T) {
	ts := start(t, NBIO, shortLimits, 0, http.HandlerFunc(echo))
	c := dial(t, ts)
	fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: test\r\nContent-Length: %d\r\n\r\n", shortLimits.MaxBufferedBody+1)
	resp, err := http.ReadResponse(c.r, nil)
	if err != nil || resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("big body: %v %v, want 413", resp, err)
	}
	c2 := dial(t, ts)
	fmt.Fprintf(c2, "POST / HTTP/1.1\r\nHost: test\r\nContent-Length: 5\r\n\r\nhello")
	if resp, err := http.ReadResponse(c2.r, nil); err != nil || resp.StatusCode != 200 {
		t.Fatalf("small body: %v %v", resp, err)
	}
}

// Under nbio a request may wait for a handler goroutine; its deadline
// (RequestTimeout) runs from when it was read in full, so a request that
// waited longer than that starts with its context done.
func TestNBIORequestDeadlineCountsThePoolWait(t *testing.T) {
	lim := testLimits
	lim.RequestTimeout = 200 * time.Millisecond
	b := newBlocker()
	ts := start(t, NBIO, lim, 1, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/first" {
			b.ServeHTTP(w, r)
			return
		}
		fmt.Fprint(w, r.Context().Err())
	}))
	first, second := dial(t, ts), dial(t, ts)
	go func() { _, _, _ = first.try("GET", "/first") }()
	poll.Recv(t, answerWithin, "the first request in its handler", b.entered)
	answer := make(chan string, 1)
	go func() { _, body, _ := second.try("GET", "/second"); answer <- body }()
	ts.await(t, "the second request queued", map[string]float64{"orderlab_http_handler_pool_queued": 1})
	time.Sleep(2 * lim.RequestTimeout) // its deadline passes while it waits
	close(b.release)
	if body := poll.Recv(t, answerWithin, "the queued request's answer", answer); body != "context deadline exceeded" {
		t.Errorf("the queued request's context: %q, want its deadline exceeded", body)
	}
}
