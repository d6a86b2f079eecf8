package httpserver

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

type connKey struct{}

// Every request on one connection sees the context Config.ConnContext gave
// that connection, and a request on another connection another one; under
// nbio the request's deadline (RequestTimeout) is kept beside it.
func TestConnContextIsOnePerConnection(t *testing.T) {
	for _, kind := range Kinds {
		t.Run(string(kind), func(t *testing.T) {
			var conns atomic.Int64
			cfg := Config{Kind: kind, Limits: testLimits, ConnContext: func(ctx context.Context) context.Context {
				return context.WithValue(ctx, connKey{}, conns.Add(1))
			}}
			cfg.Limits.RequestTimeout = time.Minute
			ts := startConfig(t, cfg, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, deadline := r.Context().Deadline()
				fmt.Fprintf(w, "conn %v deadline %v", r.Context().Value(connKey{}), deadline)
			}))
			deadline := kind == NBIO // net/http's own server sets none
			// The second connection is dialled once the first has been served.
			for i := range 2 {
				c := dial(t, ts)
				want := fmt.Sprintf("conn %d deadline %v", i+1, deadline)
				for range 2 {
					if _, body := c.do(t, "GET", "/"); body != want {
						t.Errorf("connection %d: %q, want %q", i+1, body, want)
					}
				}
			}
		})
	}
}
