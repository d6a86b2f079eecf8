package lab

import (
	"net"
	"testing"
)

// portPool is a fake kernel in its worst case for freeAddrs: it hands out
// the lowest free port, so a port released is the next one given.
type portPool struct{ used map[int]bool }

type fakeListener struct {
	net.Listener
	pool *portPool
	port int
}

func (l fakeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: l.port} }
func (l fakeListener) Close() error   { delete(l.pool.used, l.port); return nil }

func (p *portPool) listen() (net.Listener, error) {
	port := 40000
	for p.used[port] {
		port++
	}
	p.used[port] = true
	return fakeListener{pool: p, port: port}, nil
}

func TestFreeAddrsAreDistinct(t *testing.T) {
	pool := &portPool{used: map[int]bool{}}
	addrs, err := freeAddrs(2, pool.listen)
	if err != nil {
		t.Fatal(err)
	}
	if len(addrs) != 2 || addrs[0] == addrs[1] {
		t.Errorf("addresses %q: want two distinct ports", addrs)
	}
	if len(pool.used) != 0 {
		t.Errorf("%d ports still held after choosing", len(pool.used))
	}
	// And with the real kernel.
	addrs, err = freeAddrs(2, listenLoopback)
	if err != nil || addrs[0] == addrs[1] {
		t.Errorf("addresses %q, %v", addrs, err)
	}
}
