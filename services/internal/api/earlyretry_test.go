package api

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/orderlab/orderlab/services/internal/overload"
)

// earlyServer is NewServer's handler for m with cfg, and a function that
// sends one order on the connection of ctx (overload.WithClient) and
// returns its status and how long its answer took.
func earlyServer(t *testing.T, m *fakeModel, cfg Config) func(ctx context.Context) (int, time.Duration) {
	t.Helper()
	h, err := NewServer(NewLiveConfig(cfg), m, pinger{}, func() bool { return true },
		slog.New(slog.NewTextHandler(io.Discard, nil)), prometheus.NewRegistry(), noop.NewTracerProvider())
	if err != nil {
		t.Fatal(err)
	}
	return func(ctx context.Context) (int, time.Duration) {
		req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/orders", strings.NewReader(`{}`))
		rec := httptest.NewRecorder()
		start := time.Now()
		h.ServeHTTP(rec, req)
		return rec.Code, time.Since(start)
	}
}

// A client that resends a 429 before its Retry-After (3 s, fakeModel's)
// is up, on the same connection, and is refused again, gets that 429 when
// the 3 s are up, or a second after it came (overload.MaxHold), whichever
// is first; one that waited them, or another connection, gets its 429 at
// once; an early request that is admitted is served at once.
func TestEarlyRetryIsRefusedWhenItsRetryAfterIsUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := &fakeModel{}
		m.full.Store(true)
		send := earlyServer(t, m, Config{Service: "test", RequestTimeout: 10 * time.Second, HoldEarlyRetries: true})
		conn := overload.WithClient(context.Background())
		if code, d := send(conn); code != 429 || d != 0 {
			t.Errorf("first order: %d after %s, want 429 at once", code, d)
		}
		time.Sleep(time.Second)
		if code, d := send(conn); code != 429 || d != overload.MaxHold {
			t.Errorf("resent 1 s into a 3 s Retry-After: %d after %s, want 429 after %s (of the 2 s left)", code, d, overload.MaxHold)
		}
		time.Sleep(2500 * time.Millisecond) // 0.5 s left of the next 3 s
		if code, d := send(conn); code != 429 || d != 500*time.Millisecond {
			t.Errorf("resent 2.5 s into a 3 s Retry-After: %d after %s, want 429 after the 0.5 s left", code, d)
		}
		if code, d := send(overload.WithClient(context.Background())); code != 429 || d != 0 {
			t.Errorf("another connection's first order: %d after %s, want 429 at once", code, d)
		}
		time.Sleep(3 * time.Second) // honours the Retry-After of the held 429
		if code, d := send(conn); code != 429 || d != 0 {
			t.Errorf("resent after its Retry-After: %d after %s, want 429 at once", code, d)
		}
		m.full.Store(false) // early, but a permit is free
		if code, d := send(conn); code == http.StatusTooManyRequests || d != 0 {
			t.Errorf("early order admitted: %d after %s, want served (its body's 400) at once", code, d)
		}
		if n := m.admits.Load(); n != 6 {
			t.Errorf("Admit called %d times, want 6: an early request is asked to admit too", n)
		}
	})
}

// The hold ends at the request's REQUEST_TIMEOUT when that comes before
// overload.MaxHold, or when its client hangs up; HOLD_EARLY_RETRIES=false
// answers every 429 at once.
func TestEarlyRetryHoldIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := &fakeModel{}
		m.full.Store(true)
		send := earlyServer(t, m, Config{Service: "test", RequestTimeout: 500 * time.Millisecond, HoldEarlyRetries: true})
		conn := overload.WithClient(context.Background())
		send(conn)
		if code, d := send(conn); code != 429 || d != 500*time.Millisecond {
			t.Errorf("held past REQUEST_TIMEOUT: %d after %s, want 429 after 500ms", code, d)
		}
		ctx, cancel := context.WithCancel(conn)
		time.AfterFunc(100*time.Millisecond, cancel)
		if _, d := send(ctx); d != 100*time.Millisecond {
			t.Errorf("a client that hung up after 100ms held %s", d)
		}

		off := earlyServer(t, m, Config{Service: "test", RequestTimeout: 10 * time.Second})
		conn = overload.WithClient(context.Background())
		off(conn)
		if code, d := off(conn); code != 429 || d != 0 {
			t.Errorf("HOLD_EARLY_RETRIES=false: %d after %s, want 429 at once", code, d)
		}
	})
}
