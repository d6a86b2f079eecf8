package apptest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/orderlab/orderlab/services/internal/app"
)

// Abuse checks what clients that break the rules get, and that the service
// goes on answering the others, under each HTTP server (README, "HTTP
// servers", Limits).
func Abuse(t *testing.T, svc app.Service, env map[string]string) {
	EachServer(t, env, func(t *testing.T, env map[string]string) {
		inst := Start(t, svc, env)
		t.Run("OversizedBodyWrittenBeforeReading", func(t *testing.T) { oversizedBody(t, inst) })
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
