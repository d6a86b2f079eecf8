package attack

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// dialer opens TCP connections, round-robin over source addresses when it has some.
type dialer struct {
	srcs []netip.Addr
	next atomic.Uint64
}

func newDialer(srcs []netip.Addr) *dialer { return &dialer{srcs: srcs} }

// DialContext dials addr over TCP.
func (d *dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	nd := net.Dialer{Timeout: 10 * time.Second, KeepAlive: -1}
	if len(d.srcs) > 0 {
		src := d.srcs[d.next.Add(1)%uint64(len(d.srcs))]
		nd.LocalAddr = &net.TCPAddr{IP: src.AsSlice()}
		nd.Control = bindAddressNoPort
	}
	c, err := nd.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	return c, nil
}

// SourceAddrs returns the local addresses to spread conns connections to
// target over, so that no source address needs more ephemeral ports than
// the kernel's range (ports) offers: 127.0.0.1, 127.0.0.2, ... It returns
// nil when one address is enough, and an error when more are needed but the
// target is not an IPv4 loopback address (only 127.0.0.0/8 offers spare
// source addresses without configuration).
func SourceAddrs(target netip.Addr, conns, ports int) ([]netip.Addr, error) {
	perAddr := ports * 9 / 10 // leave room for other programs
	if conns <= perAddr {
		return nil, nil
	}
	if !target.Is4() || !target.IsLoopback() {
		return nil, fmt.Errorf("%d connections need more than the %d ephemeral ports of one source address, and target %s is not in 127.0.0.0/8", conns, ports, target)
	}
	n := (conns + perAddr - 1) / perAddr
	if n > 254 {
		return nil, fmt.Errorf("%d connections need %d source addresses; at most 254 are available", conns, n)
	}
	addrs := make([]netip.Addr, n)
	for i := range addrs {
		addrs[i] = netip.AddrFrom4([4]byte{127, 0, 0, byte(i + 1)})
	}
	return addrs, nil
}

// EphemeralPorts returns the size of the kernel's ephemeral port range, or
// the Linux default (28,232) when it cannot be read.
func EphemeralPorts() int {
	const linuxDefault = 60999 - 32768 + 1
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return linuxDefault
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return linuxDefault
	}
	lo, err1 := strconv.Atoi(f[0])
	hi, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || hi < lo {
		return linuxDefault
	}
	return hi - lo + 1
}
