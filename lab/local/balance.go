package local

import (
	"errors"
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
)

// Balancer spreads TCP connections over the replicas of a service, round
// robin, one connection at a time: what a Kubernetes Service does to the
// pods behind it. A keep-alive client's connection stays on one replica,
// so the load spreads as evenly as its connections do.
type Balancer struct {
	URL string // http://127.0.0.1:port

	ln       net.Listener
	backends []string
	next     atomic.Uint64
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    map[net.Conn]struct{}
}

// Balance listens on a free loopback port in front of the services.
func Balance(services []*Service) (*Balancer, error) {
	b := &Balancer{conns: map[net.Conn]struct{}{}}
	for _, s := range services {
		u, err := url.Parse(s.URL)
		if err != nil {
			return nil, err
		}
		b.backends = append(b.backends, u.Host)
	}
	if len(b.backends) == 0 {
		return nil, errors.New("balance: no services")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	b.ln, b.URL = ln, "http://"+ln.Addr().String()
	b.wg.Go(b.accept)
	return b, nil
}

func (b *Balancer) accept() {
	for {
		c, err := b.ln.Accept()
		if err != nil {
			return
		}
		backend := b.backends[(b.next.Add(1)-1)%uint64(len(b.backends))]
		b.wg.Go(func() { b.pipe(c, backend) })
	}
}

// pipe copies between the client's connection and a new one to backend;
// a backend that refuses closes the client's connection.
func (b *Balancer) pipe(c net.Conn, backend string) {
	s, err := net.Dial("tcp", backend)
	if err != nil {
		c.Close()
		return
	}
	if !b.track(c, s) {
		return
	}
	var once sync.WaitGroup
	once.Go(func() { _, _ = io.Copy(s, c); s.(*net.TCPConn).CloseWrite() })
	_, _ = io.Copy(c, s)
	c.(*net.TCPConn).CloseWrite()
	once.Wait()
	b.untrack(c, s)
}

func (b *Balancer) track(cs ...net.Conn) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.conns == nil { // closed
		for _, c := range cs {
			c.Close()
		}
		return false
	}
	for _, c := range cs {
		b.conns[c] = struct{}{}
	}
	return true
}

func (b *Balancer) untrack(cs ...net.Conn) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range cs {
		c.Close()
		delete(b.conns, c)
	}
}

// Close stops accepting, closes every connection and waits for the copies
// to end.
func (b *Balancer) Close() error {
	err := b.ln.Close()
	b.mu.Lock()
	for c := range b.conns {
		c.Close()
	}
	b.conns = nil
	b.mu.Unlock()
	b.wg.Wait()
	return err
}
