package proc

import (
	"fmt"
	"net"
	"sync"
)

// LoopbackAddrs returns n distinct 127.0.0.1 addresses for child processes
// to listen on. Each port was free when it was chosen, and none has been
// handed out by this process before.
//
// A port is free only until someone binds it, and a child binds it a moment
// after it is chosen. Chosen one at a time by listening and closing, a port
// can come back twice (a kernel may give a port just released to the next
// listen), so two children would be told the same address. So every
// listener is held until all n ports are chosen, and every port handed out
// is remembered for the life of the process: two calls, from one test or
// from two tests running in parallel, never share a port. (Another process
// may still bind a port between its release here and the child's bind;
// nothing closes that window short of passing the listeners down.)
func LoopbackAddrs(n int) ([]string, error) { return loopback.addrs(n) }

var loopback = &allocator{listen: func() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }}

// allocator hands out the ports of the listeners listen returns.
type allocator struct {
	listen func() (net.Listener, error)

	mu    sync.Mutex
	given map[int]bool // every port handed out so far
}

func (a *allocator) addrs(n int) ([]string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.given == nil {
		a.given = map[int]bool{}
	}
	var held []net.Listener
	defer func() {
		for _, l := range held {
			_ = l.Close()
		}
	}()
	addrs := make([]string, 0, n)
	// Each port given before can come back at most once while held, so
	// n + len(given) listens always suffice.
	limit := n + len(a.given)
	for tries := 0; len(addrs) < n; tries++ {
		if tries == limit {
			return nil, fmt.Errorf("no new free loopback port in %d tries", limit)
		}
		l, err := a.listen()
		if err != nil {
			return nil, err
		}
		held = append(held, l) // rejected ones too, so that they do not come back
		addr, ok := l.Addr().(*net.TCPAddr)
		if !ok {
			return nil, fmt.Errorf("listener address %v is not TCP", l.Addr())
		}
		if a.given[addr.Port] {
			continue
		}
		a.given[addr.Port] = true
		addrs = append(addrs, addr.String())
	}
	return addrs, nil
}
