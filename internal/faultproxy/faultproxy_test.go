package faultproxy

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"go.uber.org/goleak"

	"github.com/orderlab/orderlab/internal/pgtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, goleak.IgnoreTopFunction(LeakyPipe)) }

// viaProxy starts a proxy in front of the tests' Postgres and returns it
// with a URL that goes through it.
func viaProxy(t *testing.T) (*Proxy, string) {
	t.Helper()
	u, err := url.Parse(pgtest.BaseURL())
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	u.Host = p.Addr
	return p, u.String()
}

func connect(t *testing.T, dbURL string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

func ping(c *pgx.Conn, within time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	return c.Ping(ctx)
}

// Latency adds its delay to each direction: a round trip takes at least
// twice as long (a lower bound, not a timing threshold).
func TestLatency(t *testing.T) {
	p, u := viaProxy(t)
	c := connect(t, u)
	if err := p.Latency(40 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := ping(c, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if rtt := time.Since(start); rtt < 80*time.Millisecond {
		t.Errorf("round trip with 40ms latency each way took %s", rtt)
	}
	p.Clear()
	if err := ping(c, 10*time.Second); err != nil {
		t.Errorf("after Clear: %v", err)
	}
}

// A blackhole answers nothing and resets nothing: only the caller's
// deadline ends the wait. Once cleared, new connections work.
func TestBlackhole(t *testing.T) {
	p, u := viaProxy(t)
	c := connect(t, u)
	if err := p.Blackhole(); err != nil {
		t.Fatal(err)
	}
	if err := ping(c, 200*time.Millisecond); !pgconn.Timeout(err) {
		t.Errorf("ping into a blackhole = %v, want a timeout", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if c2, err := pgx.Connect(ctx, u); err == nil {
		_ = c2.Close(context.Background())
		t.Error("a connection through a blackhole succeeded")
	}
	p.Clear()
	if err := ping(connect(t, u), 10*time.Second); err != nil {
		t.Errorf("a new connection after Clear: %v", err)
	}
}

// ResetPeer breaks an open connection with an error that is not the
// server's, and lets new ones work once cleared.
func TestResetPeer(t *testing.T) {
	p, u := viaProxy(t)
	c := connect(t, u)
	if err := p.ResetPeer(); err != nil {
		t.Fatal(err)
	}
	err := ping(c, 10*time.Second)
	var pgErr *pgconn.PgError
	if err == nil || errors.As(err, &pgErr) || pgconn.Timeout(err) {
		t.Errorf("ping through a reset = %v, want a broken connection", err)
	}
	p.Clear()
	if err := ping(connect(t, u), 10*time.Second); err != nil {
		t.Errorf("a new connection after Clear: %v", err)
	}
}

// Down closes the open connections and refuses new ones, as a stopped
// database does; Up accepts them again on the same address.
func TestDownAndUp(t *testing.T) {
	p, u := viaProxy(t)
	c := connect(t, u)
	p.Down()
	if err := ping(c, 5*time.Second); err == nil || pgconn.Timeout(err) {
		t.Errorf("ping on a connection the proxy closed = %v, want a broken connection, not a timeout", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if c2, err := pgx.Connect(ctx, u); err == nil || !strings.Contains(err.Error(), "refused") {
		if c2 != nil {
			_ = c2.Close(context.Background())
		}
		t.Errorf("connect while down = %v, want connection refused", err)
	}
	if err := p.Up(); err != nil {
		t.Fatal(err)
	}
	if err := ping(connect(t, u), 10*time.Second); err != nil {
		t.Errorf("a new connection after Up: %v", err)
	}
}
