package background

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/orderlab/orderlab/loadtest/attack"
)

// Endpoint is one kind of request of the mix.
type Endpoint struct {
	// Route is the services' route template of the request, and the route
	// label of its count: "/orders/:id".
	Route string
	// Method is GET, or POST for a generated order with its own
	// Idempotency-Key (attack.OrderBody).
	Method string
	// Path is the path and query sent. "{id}" stands for the id of an
	// order the background creates when it starts.
	Path string
	// Weight is the endpoint's share of the requests, relative to the
	// others.
	Weight int
}

// Mix is the lab's background load: orders, reads of an order and the
// three kinds of work, at the services' default delays. At 4 requests per
// second that is an order, a read and a /work/db each second, and a
// /work/api and a /work/cpu every two seconds.
var Mix = []Endpoint{
	{Route: "/orders", Method: "POST", Path: "/orders", Weight: 2},
	{Route: "/orders/:id", Method: "GET", Path: "/orders/{id}", Weight: 2},
	{Route: "/work/db", Method: "GET", Path: "/work/db", Weight: 2},
	{Route: "/work/api", Method: "GET", Path: "/work/api", Weight: 1},
	{Route: "/work/cpu", Method: "GET", Path: "/work/cpu", Weight: 1},
}

// cycle is the order in which a mix's endpoints take turns: each appears as
// often as its weight, spread out (smooth weighted round robin), so that
// every stretch of the run has the mix, not only the whole run.
func cycle(mix []Endpoint) []int {
	total := 0
	for _, e := range mix {
		total += e.Weight
	}
	current := make([]int, len(mix))
	out := make([]int, 0, total)
	for range total {
		best := -1
		for i, e := range mix {
			current[i] += e.Weight
			if best < 0 || current[i] > current[best] {
				best = i
			}
		}
		current[best] -= total
		out = append(out, best)
	}
	return out
}

// mixTransport sends each request of a run to the next endpoint of the
// mix's cycle, through one attack.Transport per endpoint, and reports every
// outcome to count. It lets one open run, paced for the whole mix, carry
// several kinds of request without the engine knowing.
type mixTransport struct {
	ctx   context.Context
	mix   []Endpoint
	trs   []attack.Transport // one per endpoint of mix
	order []int              // cycle(mix)
	next  atomic.Uint64
	count func(e Endpoint, resp attack.Response, err error)
}

var (
	_ attack.Transport = (*mixTransport)(nil)
	_ attack.Client    = (*mixClient)(nil)
)

// newMixTransport builds the transports of mix's endpoints against base
// (scheme and host), with cfg's client settings. Canceling ctx closes every
// connection.
func newMixTransport(ctx context.Context, base string, mix []Endpoint, cfg attack.TransportConfig, count func(Endpoint, attack.Response, error)) (*mixTransport, error) {
	t := &mixTransport{ctx: ctx, mix: mix, order: cycle(mix), count: count}
	for _, e := range mix {
		u, err := attack.ParseURL(base+e.Path, true)
		if err != nil {
			t.Close()
			return nil, err
		}
		c := cfg
		c.Method, c.URL = e.Method, u
		tr, err := attack.NewTransport(ctx, c)
		if err != nil {
			t.Close()
			return nil, err
		}
		t.trs = append(t.trs, tr)
	}
	return t, nil
}

// NewClient returns a client with one client per endpoint; each dials on
// its first request.
func (t *mixTransport) NewClient() attack.Client {
	c := &mixClient{t: t, clients: make([]attack.Client, len(t.trs))}
	for i, tr := range t.trs {
		c.clients[i] = tr.NewClient()
	}
	return c
}

// Close closes every endpoint's connections.
func (t *mixTransport) Close() error {
	var errs []error
	for _, tr := range t.trs {
		errs = append(errs, tr.Close())
	}
	return errors.Join(errs...)
}

// mixClient is one worker's clients, one per endpoint.
type mixClient struct {
	t       *mixTransport
	clients []attack.Client
	noBody  attack.Request // what a GET endpoint is sent
}

// Do sends req to the next endpoint of the cycle: as prepared (an order and
// its Idempotency-Key) to a POST endpoint, without a body to a GET one.
func (c *mixClient) Do(req *attack.Request) (attack.Response, error) {
	i := c.t.order[(c.t.next.Add(1)-1)%uint64(len(c.t.order))]
	e := c.t.mix[i]
	r := req
	if e.Method != "POST" {
		r = &c.noBody
	}
	resp, err := c.clients[i].Do(r)
	if err == nil || c.t.ctx.Err() == nil { // a request cut short by the end of the load has no outcome
		c.t.count(e, resp, err)
	}
	return resp, err
}

// Close closes the worker's connections.
func (c *mixClient) Close() error {
	var errs []error
	for _, cl := range c.clients {
		errs = append(errs, cl.Close())
	}
	return errors.Join(errs...)
}
