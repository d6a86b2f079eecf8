package proc

import (
	"net"
	"testing"
)

// portPool is a kernel in its worst case for LoopbackAddrs: it hands out the
// lowest free port, so a port released is the next one given.
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

func TestAddrsAreDistinctWithinAndAcrossCalls(t *testing.T) {
	pool := &portPool{used: map[int]bool{}}
	a := &allocator{listen: pool.listen}
	seen := map[string]bool{}
	for _, n := range []int{2, 1, 1, 3} {
		addrs, err := a.addrs(n)
		if err != nil {
			t.Fatal(err)
		}
		if len(addrs) != n {
			t.Fatalf("addrs(%d) = %q", n, addrs)
		}
		for _, addr := range addrs {
			if seen[addr] {
				t.Errorf("%s handed out twice", addr)
			}
			seen[addr] = true
		}
		if len(pool.used) != 0 {
			t.Errorf("%d ports still held after choosing", len(pool.used))
		}
	}
}

func TestLoopbackAddrsWithTheRealKernel(t *testing.T) {
	first, err := LoopbackAddrs(2)
	if err != nil {
		t.Fatal(err)
	}
	second, err := LoopbackAddrs(1)
	if err != nil {
		t.Fatal(err)
	}
	all := append(first, second...)
	seen := map[string]bool{}
	for _, addr := range all {
		host, _, err := net.SplitHostPort(addr)
		if err != nil || host != "127.0.0.1" {
			t.Errorf("address %q: want 127.0.0.1:port (%v)", addr, err)
		}
		if seen[addr] {
			t.Errorf("%s handed out twice", addr)
		}
		seen[addr] = true
		// Free: a child can bind it.
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Errorf("listen on %s: %v", addr, err)
			continue
		}
		l.Close()
	}
}
