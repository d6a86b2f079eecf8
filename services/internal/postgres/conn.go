package postgres

import (
	"context"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// How the services notice a database that stopped answering (docs/reference/database-failures.md). A refused connect fails at once; these bound the
// waits that a silent peer (a partition, a blackhole, a host that died
// without a reset) would otherwise make endless.
const (
	// ConnectTimeout bounds every new connection, dial to authentication,
	// unless DATABASE_URL sets connect_timeout. pgxpool opens a connection
	// in the background, detached from the request that asked for it (a
	// request that gives up does not cancel it), so without a bound one
	// connect into a silent network would hold a pool slot for good. A
	// healthy connect takes milliseconds.
	ConnectTimeout = 2 * time.Second
	// KeepAliveIdle, KeepAliveInterval and KeepAliveCount: an idle
	// connection whose peer went silent is declared dead by the kernel
	// after about 5 + 3 x 2 = 11 s, so that its next use fails at once,
	// before anything is sent (safe to retry), instead of waiting for the
	// request's deadline. Go's default (15 s idle, 9 probes 15 s apart)
	// takes 2.5 minutes.
	KeepAliveIdle     = 5 * time.Second
	KeepAliveInterval = 2 * time.Second
	KeepAliveCount    = 3
	// UserTimeout is TCP_USER_TIMEOUT (Linux): how long sent data may stay
	// unacknowledged before the kernel drops the connection. The peer's
	// kernel acknowledges at once however long the query runs, so only a
	// peer that is gone waits this long. It ends a transaction sent into a
	// partition after 10 s even when its deadline (REQUEST_TIMEOUT, 30 s)
	// is further away, and it also bounds keepalive probing.
	UserTimeout = 10 * time.Second
)

// configureConn applies the settings above to cc, and names the sessions
// appName in pg_stat_activity unless the URL names them.
func configureConn(cc *pgx.ConnConfig, appName string) {
	if cc.ConnectTimeout == 0 {
		cc.ConnectTimeout = ConnectTimeout
	}
	if _, ok := cc.RuntimeParams["application_name"]; !ok && appName != "" {
		cc.RuntimeParams["application_name"] = appName
	}
	d := &net.Dialer{
		KeepAliveConfig: net.KeepAliveConfig{
			Enable: true, Idle: KeepAliveIdle, Interval: KeepAliveInterval, Count: KeepAliveCount,
		},
		Control: func(network, _ string, c syscall.RawConn) error {
			if !strings.HasPrefix(network, "tcp") {
				return nil // a Unix socket has no TCP options
			}
			return setUserTimeout(c, UserTimeout)
		},
	}
	cc.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		return d.DialContext(ctx, network, addr)
	}
}
