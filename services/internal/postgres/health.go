package postgres

import (
	"context"
	"sync"

	"github.com/jackc/pgx/v5"
)

// healthConn is one connection outside the pool, used only by readiness
// checks, redialled after a failure.
type healthConn struct {
	cfg  *pgx.ConnConfig
	mu   sync.Mutex
	conn *pgx.Conn
}

func (h *healthConn) ping(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.conn == nil || h.conn.IsClosed() {
		c, err := pgx.ConnectConfig(ctx, h.cfg)
		if err != nil {
			return err
		}
		h.conn = c
	}
	if err := h.conn.Ping(ctx); err != nil {
		_ = h.conn.Close(context.WithoutCancel(ctx))
		h.conn = nil
		return err
	}
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
