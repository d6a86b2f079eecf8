//go:build !linux

package attack

import "net"

// sock is a rawClient's connection; outside Linux it is net.Conn's Read
// and Write (see sock_linux.go for what Linux does instead).
type sock struct{ conn net.Conn }

func newSock(conn net.Conn) *sock { return &sock{conn: conn} }

func (s *sock) Read(p []byte) (int, error) { return s.conn.Read(p) }

func (s *sock) write(b []byte) error {
	_, err := s.conn.Write(b)
	return err
}
