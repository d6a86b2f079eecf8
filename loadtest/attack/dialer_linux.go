package attack

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// bindAddressNoPort defers the choice of the source port to connect(2), so
// that a port is unique per four-tuple rather than per source address.
func bindAddressNoPort(_, _ string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_BIND_ADDRESS_NO_PORT, 1)
	})
	if err != nil {
		return err
	}
	return serr
}
