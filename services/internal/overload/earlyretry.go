package overload

import (
	"context"
	"sync/atomic"
	"time"
)

// A client that resends every 429 at once is a closed loop: the sooner its
// rejection is answered, the sooner it is back, and on shared cores the
// storm takes whatever CPU the admitted requests leave (docs/admission.md,
// "Under a storm, a Retry-After kept"). A Retry-After is the service's
// answer to when to come back; a client that comes back earlier, on the
// same connection, and is refused again gets its 429 only once the time it
// was told has passed, or a second after it came (MaxHold), whichever is
// first. Until then its request is a parked goroutine: no CPU, and no new
// attempt from that client. A client that waits what it was told is never
// early, so it is never held.

// Client is what the service remembers of one client connection between its
// requests: until when the last 429 it was given asked it to wait. The
// HTTP server gives every connection one (WithClient, from its
// ConnContext); requests on one connection are served one at a time, but a
// Client is safe for concurrent use anyway.
type Client struct {
	until atomic.Int64 // UnixNano of the last Retry-After's end; 0: none given
}

type clientKey struct{}

// WithClient returns ctx with a Client of its own: one per connection.
func WithClient(ctx context.Context) context.Context {
	return context.WithValue(ctx, clientKey{}, &Client{})
}

// ClientOf is the Client of ctx's connection, or nil when its server gives
// none (a test's handler called directly); a nil Client is never early.
func ClientOf(ctx context.Context) *Client {
	c, _ := ctx.Value(clientKey{}).(*Client)
	return c
}

// Early says whether a request that arrived at now came before the end of
// the Retry-After last given on its connection, and when that end is.
func (c *Client) Early(now time.Time) (until time.Time, early bool) {
	if c == nil {
		return time.Time{}, false
	}
	u := c.until.Load()
	if u == 0 || now.UnixNano() >= u {
		return time.Time{}, false
	}
	return time.Unix(0, u), true
}

// Told notes a 429 answered at now with retryAfter: a request on this
// connection before now+retryAfter is early.
func (c *Client) Told(now time.Time, retryAfter time.Duration) {
	if c != nil {
		c.until.Store(now.Add(retryAfter).UnixNano())
	}
}

// MaxHold bounds the hold of an early request's 429: a second, the
// shortest Retry-After (MinRetryAfter). It paces a client that resends at
// once to about one refusal a second, what a Retry-After of a second does;
// a longer Retry-After (the pipeline's audit stage gives up to a minute)
// would save at most that one refusal a second per connection, while a
// connection that carries many clients' requests (a proxy, an open-loop
// load generator) would hold each of them for it: in the compose lab,
// backpressure-void's pipeline, 1,000 orders/s on 2,000 keep-alive
// connections, saw a quarter of its requests time out at 30 s with the
// hold bounded by REQUEST_TIMEOUT alone.
const MaxHold = MinRetryAfter

// HoldUntil waits until t, or until ctx ends (the client hung up, the
// request's deadline), whichever is first.
func HoldUntil(ctx context.Context, t time.Time) {
	d := time.Until(t)
	if d <= 0 {
		return
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
	}
}
