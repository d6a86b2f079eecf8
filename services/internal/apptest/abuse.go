package apptest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orderlab/orderlab/internal/poll"
	"github.com/orderlab/orderlab/internal/proc"
	"github.com/orderlab/orderlab/services/internal/app"
	"github.com/orderlab/orderlab/services/internal/httpserver"
)

// Abuse checks what clients that break the rules get, and that the service
// goes on answering the others, under each HTTP server (docs/reference/http-servers.md,
// Limits).
func Abuse(t *testing.T, svc app.Service, env map[string]string) {
	EachServer(t, env, func(t *testing.T, env map[string]string) {
		inst := Start(t, svc, env)
		perConn := 0 // goroutines a connection holds
		if env["HTTP_SERVER"] == string(httpserver.NetHTTP) {
			perConn = 1
		}
		t.Run("OversizedBodyWrittenBeforeReading", func(t *testing.T) { oversizedBody(t, inst) })
		t.Run("Slowloris", func(t *testing.T) { slowloris(t, inst, perConn) })
		t.Run("NeverReadsItsAnswers", func(t *testing.T) { neverReads(t, inst) })
		t.Run("IdleConnections", func(t *testing.T) { idleConnections(t, inst, perConn) })
		t.Run("HeaderFlood", func(t *testing.T) { headerFlood(t, inst) })
	})
}

// rawConn is one TCP connection to the API, spoken to by hand.
type rawConn struct {
	net.Conn
	r *bufio.Reader
}

func (i *Instance) dialRaw(t testing.TB) *rawConn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(i.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{Conn: c, r: bufio.NewReaderSize(c, 512)} // small: thousands of them share the process with the service
}

// oversizedBody: a client that writes a whole 5 MiB order before it reads
// gets the 413 problem, not a reset: the server drains what it sends
// (lingering close) before it closes. A 5 MiB body is over both the API's
// limit (net/http streams it to the API) and what nbio buffers (its guard
// answers).
func oversizedBody(t *testing.T, inst *Instance) {
	c := inst.dialRaw(t)
	const size = 5 << 20
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	head := fmt.Sprintf("POST /orders HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", size)
	body := `{"customer_id":"` + strings.Repeat("x", size-len(`{"customer_id":""}`)) + `"}`
	if _, err := io.WriteString(c, head+body); err != nil {
		t.Fatalf("writing the 5 MiB request: %v (the server closed before it had drained it)", err)
	}
	resp, err := http.ReadResponse(c.r, nil)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the answer's body: %v", err)
	}
	var p problem
	if resp.StatusCode != http.StatusRequestEntityTooLarge || resp.Header.Get("Content-Type") != "application/problem+json" ||
		json.Unmarshal(b, &p) != nil || !strings.HasSuffix(p.Type, "#problem-body-too-large") || p.Status != 413 {
		t.Fatalf("answer = %d %q %s, want the 413 body-too-large problem", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	if r := inst.MustDo("GET", "/livez", "", nil, nil); r.Status != 200 {
		t.Errorf("after: GET /livez = %d", r.Status)
	}
}

// footprint is what the process holds: goroutines, and heap and stack
// bytes in use after a collection. Service and client share the process;
// the clients here hold raw connections and no goroutines of their own.
type footprint struct {
	goroutines int
	bytes      uint64
}

func measure() footprint {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return footprint{goroutines: runtime.NumGoroutine(), bytes: m.HeapInuse + m.StackInuse}
}

// bounded fails t when the footprint grew by more than goroutines and bytes
// since base.
func (f footprint) bounded(t *testing.T, base footprint, goroutines int, bytes uint64, what string) {
	t.Helper()
	if g := f.goroutines - base.goroutines; g > goroutines {
		t.Errorf("%s: %d goroutines more, want at most %d", what, g, goroutines)
	}
	if f.bytes > base.bytes && f.bytes-base.bytes > bytes {
		t.Errorf("%s: %d KiB more heap and stack, want at most %d KiB", what, (f.bytes-base.bytes)>>10, bytes>>10)
	}
	t.Logf("%s: %+d goroutines, %+d KiB heap and stack", what, f.goroutines-base.goroutines, (int64(f.bytes)-int64(base.bytes))/1024)
}

// stillServes fails t unless another client is answered 200 promptly (5 s:
// a slow CI machine under -race).
func stillServes(t *testing.T, inst *Instance, what string) {
	t.Helper()
	start := time.Now()
	r, err := inst.Do("GET", "/work/api?delay=1ms", "", nil, nil)
	if err != nil || r.Status != 200 {
		t.Fatalf("%s: another client's GET /work/api = %v %d", what, err, r.Status)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("%s: another client waited %v for its answer", what, took)
	}
}

// slowloris: 200 clients send their headers a byte a second. Each holds a
// connection (and, under net/http, its goroutine) until ReadHeaderTimeout;
// nothing more, and the others are served meanwhile.
func slowloris(t *testing.T, inst *Instance, perConn int) {
	const n = 200
	base := measure()
	conns := make([]*rawConn, n)
	for i := range conns {
		conns[i] = inst.dialRaw(t)
	}
	req := "GET /livez HTTP/1.1\r\nHost: test\r\nX-Slow: 1\r\n"
	for b := range 3 {
		for _, c := range conns {
			_ = c.SetWriteDeadline(time.Now().Add(time.Second))
			if _, err := io.WriteString(c, req[b:b+1]); err != nil {
				t.Fatalf("byte %d: %v", b, err)
			}
		}
		stillServes(t, inst, "during slowloris")
		time.Sleep(time.Second)
	}
	measure().bounded(t, base, n*perConn+50, n*64<<10, fmt.Sprintf("%d slowloris connections", n))
}

// neverReads: a client pipelines requests and never reads the answers.
// net/http stops reading its requests once its answer blocks on the full
// socket (until WriteTimeout closes it); nbio reads on, and closes the
// connection once its unsent answers pass MaxUnsentBytes. Either way the
// client's writes stop within seconds, and the server holds bounded memory.
func neverReads(t *testing.T, inst *Instance) {
	base := measure()
	c := inst.dialRaw(t)
	chunk := []byte(strings.Repeat("GET /no/such/route HTTP/1.1\r\nHost: test\r\n\r\n", 1500))
	var sent int
	poll.Until(t, 10*time.Second, "the server to stop reading the requests of a client that reads no answer", func() error {
		_ = c.SetWriteDeadline(time.Now().Add(time.Second))
		n, err := c.Write(chunk)
		sent += n
		if err != nil { // blocked for a second (backpressure), or closed
			t.Logf("the server stopped taking requests after %d KiB: %v", sent>>10, err)
			return nil
		}
		return fmt.Errorf("%d MiB sent and read", sent>>20)
	})
	stillServes(t, inst, "with a client that never reads")
	measure().bounded(t, base, 50, 64<<20, "a client that never reads")
}

// idleConnections: 10,000 keep-alive connections, each idle after one
// request (3,000 under -race, whose detector allows 8,128 goroutines;
// fewer when the open-files limit, raised to its hard limit, cannot hold
// two descriptors a connection). net/http holds a goroutine and its
// buffers per connection, nbio neither; the others are served.
func idleConnections(t *testing.T, inst *Instance, perConn int) {
	n := 10000
	if raceEnabled {
		n = 3000
	}
	limit, err := proc.RaiseOpenFiles()
	if err != nil {
		t.Fatal(err)
	}
	n = min(n, (limit-1024)/2)
	if n < 1000 {
		t.Fatalf("the open-files limit (%d) holds only %d connections: raise it (ulimit -n)", limit, n)
	}
	base := measure()
	start := time.Now()
	conns := make([]*rawConn, n)
	var wg sync.WaitGroup
	next := make(chan int)
	for range 32 {
		wg.Go(func() {
			for i := range next {
				c := inst.dialRaw(t)
				_ = c.SetDeadline(time.Now().Add(30 * time.Second))
				if _, err := io.WriteString(c, "GET /livez HTTP/1.1\r\nHost: test\r\n\r\n"); err != nil {
					t.Errorf("connection %d: %v", i, err)
					continue
				}
				resp, err := http.ReadResponse(c.r, nil)
				if err != nil {
					t.Errorf("connection %d: %v", i, err)
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = c.SetDeadline(time.Time{})
				conns[i] = c
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	if t.Failed() {
		return
	}
	t.Logf("%d connections opened, each idle after one request, in %v", n, time.Since(start).Round(time.Millisecond))
	stillServes(t, inst, fmt.Sprintf("%d idle connections", n))
	perConnBytes := uint64(12 << 10)
	if perConn > 0 {
		perConnBytes = 64 << 10
	}
	measure().bounded(t, base, n*perConn+100, uint64(n)*perConnBytes, fmt.Sprintf("%d idle connections", n))
	start = time.Now()
	for _, c := range conns {
		c.Close()
	}
	t.Logf("closed in %v", time.Since(start).Round(time.Millisecond))
}

// headerFlood: headers past MaxHeaderBytes (16 KiB, plus 4 KiB of slack),
// as many small ones or one huge one, are answered 431, and the
// connection closes.
func headerFlood(t *testing.T, inst *Instance) {
	var many strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&many, "X-Flood-%d: %s\r\n", i, strings.Repeat("v", 40))
	}
	floods := map[string]string{
		"2,000 headers":     many.String(),
		"one 1 MiB header":  "X-Huge: " + strings.Repeat("h", 1<<20) + "\r\n",
		"a 1 MiB URL query": "", // the request line counts too
	}
	base := measure()
	for name, headers := range floods {
		c := inst.dialRaw(t)
		_ = c.SetDeadline(time.Now().Add(20 * time.Second))
		path := "/livez"
		if headers == "" {
			path += "?q=" + strings.Repeat("q", 1<<20)
		}
		if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: test\r\n"+headers+"\r\n"); err != nil {
			t.Errorf("%s: writing: %v", name, err)
			continue
		}
		resp, err := http.ReadResponse(c.r, nil)
		if err != nil || (resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge && !(headers == "" && resp.StatusCode == http.StatusRequestURITooLong)) {
			t.Errorf("%s: %v %v, want 431", name, resp, err)
		}
	}
	stillServes(t, inst, "after the header floods")
	measure().bounded(t, base, 50, 16<<20, "header floods")
}
