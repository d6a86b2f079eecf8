//go:build !linux

package postgres

import (
	"syscall"
	"time"
)

// setUserTimeout does nothing where TCP_USER_TIMEOUT does not exist: there
// the keepalives and the request's deadline notice a silent peer.
func setUserTimeout(syscall.RawConn, time.Duration) error { return nil }
