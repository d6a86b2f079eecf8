package dbproxy

import (
	"context"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/goleak"

	"github.com/orderlab/orderlab/internal/faultproxy"
	"github.com/orderlab/orderlab/internal/pgtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, goleak.IgnoreTopFunction(faultproxy.LeakyPipe)) }

// The control API in front of a proxy to the real Postgres: latency per
// round trip, down (refused), and healthy again.
func TestControlAPISetsTheFaults(t *testing.T) {
	u, err := url.Parse(pgtest.BaseURL())
	if err != nil {
		t.Fatal(err)
	}
	p, err := faultproxy.New(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	srv := httptest.NewServer(NewServer(p))
	defer srv.Close()
	c := &Client{URL: srv.URL}
	u.Host = p.Addr
	ctx := context.Background()
	connect := func() (*pgx.Conn, error) {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		return pgx.Connect(ctx, u.String())
	}

	if err := c.Set(ctx, Fault{Fault: "latency", Latency: "80ms"}); err != nil {
		t.Fatal(err)
	}
	conn, err := connect()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := conn.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if rtt := time.Since(start); rtt < 80*time.Millisecond {
		t.Errorf("a round trip with 80ms latency took %s", rtt)
	}
	_ = conn.Close(ctx)

	if err := c.Set(ctx, Fault{Fault: "down"}); err != nil {
		t.Fatal(err)
	}
	if f, err := c.Get(ctx); err != nil || f.Fault != "down" {
		t.Errorf("Get = %+v, %v; want down", f, err)
	}
	if conn, err := connect(); err == nil || !strings.Contains(err.Error(), "refused") {
		if conn != nil {
			_ = conn.Close(ctx)
		}
		t.Errorf("connect while down = %v, want refused", err)
	}
	if err := c.Set(ctx, Fault{Fault: "none"}); err != nil {
		t.Fatal(err)
	}
	conn, err = connect()
	if err != nil {
		t.Fatalf("after none: %v", err)
	}
	_ = conn.Close(ctx)

	for _, f := range []Fault{{Fault: "latency", Latency: "soon"}, {Fault: "flood"}} {
		if err := c.Set(ctx, f); err == nil || !strings.Contains(err.Error(), "400") {
			t.Errorf("Set(%+v) = %v, want a 400", f, err)
		}
	}
}
