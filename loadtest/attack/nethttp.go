package attack

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"time"
)

// stdTransport makes clients that share one net/http client whose pool
// holds as many idle connections as the run has workers, so that no
// connection is closed and reopened between requests (net/http's default
// keeps 2 idle connections per host).
type stdTransport struct {
	ctx    context.Context
	client *http.Client
	tr     *http.Transport
	method string
	url    string
	host   string // the Host header to send; empty: the URL's
	header http.Header
}

func newStdTransport(ctx context.Context, cfg TransportConfig, d *dialer) *stdTransport {
	tr := &http.Transport{
		DialContext:         d.DialContext,
		MaxIdleConns:        cfg.Conns,
		MaxIdleConnsPerHost: cfg.Conns,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}
	return &stdTransport{
		ctx: ctx,
		// A redirect is an answer like any other: following it would send
		// a second request the run does not count, to a URL it did not ask.
		client: &http.Client{Transport: tr, Timeout: cfg.Timeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		tr:     tr,
		method: cfg.Method,
		url:    cfg.URL.String(),
		host:   cfg.Header.Get("Host"),
		header: cfg.Header,
	}
}

// NewClient returns a client over the shared pool.
func (t *stdTransport) NewClient() Client { return &stdClient{t: t} }

// Close closes the idle connections; canceling the transport's context has
// already aborted the busy ones.
func (t *stdTransport) Close() error {
	t.tr.CloseIdleConnections()
	return nil
}

type stdClient struct{ t *stdTransport }

// Do sends req through net/http and drains the body so that the
// connection returns to the pool.
func (c *stdClient) Do(req *Request) (Response, error) {
	var body io.Reader
	if req.Body != nil {
		body = bytes.NewReader(req.Body)
	}
	r, err := http.NewRequestWithContext(c.t.ctx, c.t.method, c.t.url, body)
	if err != nil {
		return Response{}, err
	}
	for k, v := range c.t.header {
		r.Header[k] = v
	}
	if c.t.host != "" {
		r.Host = c.t.host // net/http sends r.Host and ignores a Host in r.Header
	}
	if r.Header.Get("User-Agent") == "" {
		r.Header.Set("User-Agent", "orderlab-loadtest")
	}
	if req.Body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	if len(req.IdempotencyKey) > 0 {
		r.Header.Set("Idempotency-Key", string(req.IdempotencyKey))
	}
	if req.Attempt > 0 {
		r.Header.Set(RetryAttemptHeader, strconv.Itoa(req.Attempt))
	}
	resp, err := c.t.client.Do(r)
	if err != nil {
		return Response{}, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return Response{Status: resp.StatusCode, RetryAfter: parseRetryAfter([]byte(resp.Header.Get("Retry-After")), time.Now())}, err
}

// Close does nothing: connections belong to the shared pool.
func (c *stdClient) Close() error { return nil }
