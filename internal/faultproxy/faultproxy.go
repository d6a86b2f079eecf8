// Package faultproxy puts a TCP proxy with network faults on demand between
// a client and a server: Shopify's toxiproxy (v2.12.0), run in-process, so
// that a test or a scenario can slow, silence or reset the connections
// between a service and its Postgres without root, iptables or Docker.
//
//	p, _ := faultproxy.New("127.0.0.1:5432")  // clients dial p.Addr instead
//	p.Blackhole()                             // every byte dropped, no RST
//	p.Clear()                                 // healthy again
//	p.Close()
//
// A fault applies to the connections already open and to new ones. The
// proxy's own end of every connection is healthy TCP: it accepts and
// acknowledges what it then drops, so a client sees a silent peer, not a
// network that refuses (TCP keepalives and TCP_USER_TIMEOUT see a live
// proxy; deadlines are what notice).
package faultproxy

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
)

// Proxy is a running proxy to one upstream.
type Proxy struct {
	Addr string // the loopback address clients dial: host:port

	proxy *toxiproxy.Proxy
}

// New starts a proxy to upstream (host:port) on a free loopback port.
func New(upstream string) (*Proxy, error) { return NewOn("127.0.0.1:0", upstream) }

// NewOn starts a proxy to upstream on listen (host:port; port 0 picks a
// free one), e.g. ":5432" for a proxy other hosts dial (the lab's dbproxy).
func NewOn(listen, upstream string) (*Proxy, error) {
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	p := toxiproxy.NewProxy(srv, "faultproxy", listen, upstream)
	if err := p.Start(); err != nil {
		return nil, fmt.Errorf("faultproxy: %w", err)
	}
	return &Proxy{Addr: p.Listen, proxy: p}, nil
}

// Latency delays every chunk of data by d in each direction: a round trip
// takes 2d longer.
func (p *Proxy) Latency(d time.Duration) error {
	return p.both("latency", fmt.Sprintf(`{"latency": %d}`, d.Milliseconds()))
}

// Blackhole drops every byte in both directions and keeps the connections
// open (toxiproxy's timeout toxic with timeout 0): a partition, or a host
// that vanished without a reset. New connections are accepted and then
// hear nothing.
func (p *Proxy) Blackhole() error {
	return p.both("timeout", `{"timeout": 0}`)
}

// ResetPeer resets every connection (TCP RST, unsent data discarded) as
// soon as data arrives on it, in either direction: a peer that crashed or
// a middlebox that dropped the connection state.
func (p *Proxy) ResetPeer() error {
	return p.both("reset_peer", `{"timeout": 0}`)
}

// Down closes every connection and refuses new ones, as a database that
// stopped does (without its goodbye message); Up listens again on the same
// address.
func (p *Proxy) Down() { p.proxy.Stop() }

// Up ends Down: new connections are accepted again.
func (p *Proxy) Up() error {
	if err := p.proxy.Start(); err != nil && !errors.Is(err, toxiproxy.ErrProxyAlreadyStarted) {
		return fmt.Errorf("faultproxy: %w", err)
	}
	return nil
}

// Clear removes every fault: data flows again on the connections that
// survived.
func (p *Proxy) Clear() {
	p.proxy.Toxics.ResetToxics(context.Background())
}

// Close stops the proxy and closes every connection through it.
//
// toxiproxy v2.12.0 can leave the first stage of a connection's pipe
// blocked on a send for good when the connection closes while data is in
// flight: a goroutine whose top function is LeakyPipe outlives Close. A
// leak in toxiproxy's teardown, in the proxy and not in what goes through
// it; tests that check for leaked goroutines ignore that function (goleak's
// IgnoreTopFunction) and nothing else.
func (p *Proxy) Close() { p.proxy.Stop() }

// LeakyPipe is the top function of the goroutine Close may leave behind.
const LeakyPipe = "github.com/Shopify/toxiproxy/v2/toxics.(*NoopToxic).Pipe"

// both adds the toxic typ with attributes attrs to both directions.
func (p *Proxy) both(typ, attrs string) error {
	for _, stream := range []string{"upstream", "downstream"} {
		body := fmt.Sprintf(`{"name": %q, "type": %q, "stream": %q, "toxicity": 1, "attributes": %s}`,
			typ+"_"+stream, typ, stream, attrs)
		if _, err := p.proxy.Toxics.AddToxicJson(strings.NewReader(body)); err != nil {
			return fmt.Errorf("faultproxy: add %s toxic: %w", typ, err)
		}
	}
	return nil
}
