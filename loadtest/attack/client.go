package attack

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"time"
)

// Client sends the requests of one worker, one at a time. A worker owns its
// Client; a Client is never shared between goroutines.
type Client interface {
	// Do sends req and reads the whole response. It returns what a worker
	// needs of it, or an error when no complete response arrived.
	Do(req *Request) (Response, error)
	// Close releases the client's connection.
	Close() error
}

// Request is one request as a worker prepared it. Method, URL and the fixed
// headers belong to the [Transport]; only these parts vary per request.
type Request struct {
	Body           []byte // nil for a request without body
	IdempotencyKey []byte // sent as Idempotency-Key when not empty
	// Attempt is 0 for a request's first attempt and n for its nth re-send,
	// sent as RetryAttemptHeader when above 0: a service counts re-sends
	// by it (orderlab_http_retried_requests_total, docs/metrics.md).
	Attempt int
}

// RetryAttemptHeader carries Request.Attempt, as gRPC's
// grpc-previous-rpc-attempts does: the services read the same name.
const RetryAttemptHeader = "X-Retry-Attempt"

// Response is what a worker needs of an answer.
type Response struct {
	Status int
	// RetryAfter is the answer's Retry-After: its seconds, or the time
	// until its HTTP-date; 0 when it has none (or one that does not parse).
	RetryAfter time.Duration
}

// parseRetryAfter reads a Retry-After value (RFC 9110, section 10.2.3):
// whole seconds, or an HTTP-date. Anything else, or a date in the past, is 0.
func parseRetryAfter(v []byte, now time.Time) time.Duration {
	if len(v) == 0 {
		return 0
	}
	if v[0] >= '0' && v[0] <= '9' {
		n, err := strconv.ParseInt(string(v), 10, 64) // does not allocate
		if err != nil || n < 0 || n > math.MaxInt64/int64(time.Second) {
			return 0
		}
		return time.Duration(n) * time.Second
	}
	t, err := http.ParseTime(string(v))
	if err != nil || !t.After(now) {
		return 0
	}
	return t.Sub(now)
}

// ClientFunc adapts a function to [Client]; Close does nothing.
type ClientFunc func(req *Request) (Response, error)

// Do calls f(req).
func (f ClientFunc) Do(req *Request) (Response, error) { return f(req) }

// Close does nothing.
func (ClientFunc) Close() error { return nil }

// Transport makes the Clients of one run's workers and owns what they share.
type Transport interface {
	NewClient() Client
	// Close closes every connection, idle or busy.
	Close() error
}

// TransportFunc adapts a function that makes Clients to [Transport]; Close does nothing.
type TransportFunc func() Client

// NewClient calls f.
func (f TransportFunc) NewClient() Client { return f() }

// Close does nothing.
func (TransportFunc) Close() error { return nil }

var (
	_ Client    = ClientFunc(nil)
	_ Client    = (*rawClient)(nil)
	_ Client    = (*stdClient)(nil)
	_ Transport = TransportFunc(nil)
	_ Transport = (*rawTransport)(nil)
	_ Transport = (*stdTransport)(nil)
)

// ClientKind names an HTTP client implementation.
type ClientKind string

// The client implementations.
const (
	// ClientFast is a lean HTTP/1.1 keep-alive client over net.Conn: one
	// connection per worker, a request written with one write, the response
	// parsed without allocating. It is the default because net/http's client
	// spends most of a small request's CPU on bookkeeping a load generator
	// does not need (see loadtest/README.md, "Efficiency").
	ClientFast ClientKind = "fast"
	// ClientNetHTTP is net/http's client with a pool sized to the concurrency.
	ClientNetHTTP ClientKind = "net/http"
)

// TransportConfig says how to build a [Transport].
type TransportConfig struct {
	Kind    ClientKind
	Method  string // empty: GET
	URL     *url.URL
	Header  http.Header
	Conns   int           // connections to size the pool for
	Timeout time.Duration // per request, from write to the end of the body; 0: none
	// SourceAddrs, when set, spreads connections over these local
	// addresses (see [SourceAddrs]).
	SourceAddrs []netip.Addr
}

// NewTransport builds the Transport for cfg. Canceling ctx closes every
// connection and so aborts requests in flight.
func NewTransport(ctx context.Context, cfg TransportConfig) (Transport, error) {
	d := newDialer(cfg.SourceAddrs)
	cfg.Method = cmp.Or(cfg.Method, http.MethodGet)
	switch cfg.Kind {
	case ClientFast, "":
		return newRawTransport(ctx, cfg, d), nil
	case ClientNetHTTP:
		return newStdTransport(ctx, cfg, d), nil
	default:
		return nil, fmt.Errorf("unknown client %q (want %s or %s)", cfg.Kind, ClientFast, ClientNetHTTP)
	}
}
