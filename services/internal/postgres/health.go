package postgres

import (
	"context"
	"sync"

	"github.com/jackc/pgx/v5"
)

// healthConn is one connection outside the pool, used by readiness checks
// and to time the database's round trip (roundtrip.go).
type healthConn struct {
	cfg  *pgx.ConnConfig
	mu   sync.Mutex
	conn *pgx.Conn
}

// ping pings the kept connection; when that fails (a killed backend, a
// restarted server), it tries once more on a fresh one within ctx, as the
// store does for its calls: only a database that does not answer a new
// connection is reported.
func (h *healthConn) ping(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.conn != nil {
		err := h.conn.Ping(ctx)
		if err == nil {
			return nil
		}
		_ = h.conn.Close(context.WithoutCancel(ctx))
		h.conn = nil
		if ctx.Err() != nil {
			return err
		}
	}
	c, err := pgx.ConnectConfig(ctx, h.cfg)
	if err != nil {
		return err
	}
	h.conn = c
	return nil
}

func (h *healthConn) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.conn != nil {
		_ = h.conn.Close(context.Background())
		h.conn = nil
	}
}
