package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// healthConn is one connection outside the pool, used by readiness checks
// and to time the database's round trip (roundtrip.go).
type healthConn struct {
	cfg *pgx.ConnConfig
	// use is held by the one caller on conn at a time (a buffered channel of
	// one, so that a caller waits for it within its context: a scrape's
	// round trip gives up after 1 s behind a readiness check stuck on a
	// silent database).
	use  chan struct{}
	conn *pgx.Conn
}

func newHealthConn(cfg *pgx.ConnConfig, conn *pgx.Conn) *healthConn {
	return &healthConn{cfg: cfg, use: make(chan struct{}, 1), conn: conn}
}

// take waits for conn within ctx; give hands it back.
func (h *healthConn) take(ctx context.Context) error {
	select {
	case h.use <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (h *healthConn) give() { <-h.use }

// ping pings the kept connection; when that fails (a killed backend, a
// restarted server), it tries once more on a fresh one within ctx, as the
// store does for its calls: only a database that does not answer a new
// connection is reported.
func (h *healthConn) ping(ctx context.Context) error {
	if err := h.take(ctx); err != nil {
		return err
	}
	defer h.give()
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
	_ = h.take(context.Background())
	defer h.give()
	if h.conn != nil {
		_ = h.conn.Close(context.Background())
		h.conn = nil
	}
}
