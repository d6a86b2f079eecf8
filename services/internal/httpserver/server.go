// Package httpserver serves the API's http.Handler with one of two HTTP
// servers (HTTP_SERVER): net/http, a goroutine per connection, or nbio, an
// event loop (epoll or kqueue) that reads every connection from a few
// poller goroutines and runs handlers on a bounded pool, so that an idle
// keep-alive connection holds no goroutine. Both take the same Limits, drain
// the same way on Shutdown and report their connections as the same
// metrics; docs/reference/http-servers.md, says where nbio differs.
package httpserver

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Kind names an HTTP server implementation.
type Kind string

// The servers.
const (
	// NetHTTP is net/http's Server: a goroutine per connection, which also
	// runs the connection's handlers.
	NetHTTP Kind = "net/http"
	// NBIO is github.com/lesismal/nbio's nbhttp engine: pollers read every
	// connection, a bounded pool of goroutines runs the handlers.
	NBIO Kind = "nbio"
)

// Kinds are the servers, the default first.
var Kinds = []Kind{NetHTTP, NBIO}

// Limits are the timeouts and sizes both servers enforce on the API listener.
type Limits struct {
	// ReadHeaderTimeout bounds reading a request's headers, from its first byte.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request, body included, from its first byte.
	ReadTimeout time.Duration
	// WriteTimeout bounds the time from the end of a request to the end of
	// its answer: a handler slower than that loses its connection.
	WriteTimeout time.Duration
	// IdleTimeout closes a keep-alive connection that sends no new request for this long.
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds the request line and headers (plus 4 KiB of
	// slack, as net/http allows); more is answered 431.
	MaxHeaderBytes int
	// RequestTimeout, when set, is the deadline of a request's context from
	// the moment it was read in full. Under net/http the handler starts at
	// that moment; under nbio the request may first wait for a handler
	// goroutine, and that wait counts. (The API sets its own deadline of
	// REQUEST_TIMEOUT when its handler starts; the earlier one wins.)
	RequestTimeout time.Duration
	// MaxBufferedBody bounds the body nbio reads into memory before the
	// handler runs (net/http streams bodies and leaves the bound to the
	// handler). A larger Content-Length is answered 413 and the connection
	// closed; the handler's own, smaller limit answers the rest.
	MaxBufferedBody int
	// MaxUnsentBytes bounds, under nbio, the answers a connection may have
	// waiting to be sent beyond what its socket holds: a client that sends
	// requests and never reads their answers would otherwise grow nbio's
	// write buffer without end. More closes the connection. net/http needs
	// no bound: its handler blocks on the full socket until WriteTimeout.
	MaxUnsentBytes int
}

// Config says which server to build and how.
type Config struct {
	Kind   Kind
	Limits Limits
	// HandlerPool is nbio's most handler goroutines; 0 sizes the pool
	// from the open-files limit (defaultHandlerPool). net/http has no pool.
	HandlerPool int
	// BodyTooLarge is the body (application/problem+json) of the 413 nbio
	// answers itself for a Content-Length over MaxBufferedBody, so that it
	// reads as the API's own 413; empty, the answer is plain text.
	BodyTooLarge []byte
	// ConnContext, when set, gives each connection a context that its
	// requests' contexts derive from, so that a handler can keep state per
	// connection (the API's overload.Client); as net/http's ConnContext,
	// and the same under nbio.
	ConnContext func(context.Context) context.Context
	Log         *slog.Logger
	Registry    prometheus.Registerer
}

// Server serves one listener.
type Server interface {
	// Serve accepts connections until Shutdown and returns nil then; it
	// returns an error when serving failed.
	Serve() error
	// Shutdown stops accepting (the listener closes), closes idle
	// connections, answers the requests in flight with Connection: close
	// and returns when every connection is closed, or ctx's error when ctx
	// ends first.
	Shutdown(ctx context.Context) error
	// Addr is the listener's address.
	Addr() net.Addr
}

var (
	_ Server = (*netHTTPServer)(nil)
	_ Server = (*nbioServer)(nil)
)

// New returns a server of cfg.Kind for h on ln, which it owns from now on,
// and registers its metrics on cfg.Registry.
func New(cfg Config, ln net.Listener, h http.Handler) (Server, error) {
	m, err := newMetrics(cfg.Registry, cfg.Kind)
	if err != nil {
		return nil, err
	}
	switch cfg.Kind {
	case NetHTTP, "":
		return newNetHTTP(cfg, ln, h, m), nil
	case NBIO:
		return newNBIO(cfg, ln, h, m), nil
	}
	return nil, fmt.Errorf("HTTP server %q: want %s or %s", cfg.Kind, NetHTTP, NBIO)
}
