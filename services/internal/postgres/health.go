package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
)

// errHealthClosed is a health check's or a round trip's after the store
// closed: it opens no connection then.
var errHealthClosed = errors.New("postgres: store closed")

// healthConn is one connection outside the pool, used by readiness checks
// and to time the database's round trip (roundtrip.go).
type healthConn struct {
	cfg *pgx.ConnConfig
	// use is held by the one caller on conn and closed at a time (a
	// buffered channel of one, so that a caller waits for it within its
	// context: a scrape's round trip gives up behind a readiness check
	// stuck on a silent database).
	use    chan struct{}
	conn   *pgx.Conn
	closed bool
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
	if h.closed {
		return errHealthClosed
	}
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

// close closes the connection; the checks and round trips after it fail
// with errHealthClosed.
func (h *healthConn) close() {
	_ = h.take(context.Background())
	defer h.give()
	h.closed = true
	if h.conn != nil {
		_ = h.conn.Close(context.Background())
		h.conn = nil
	}
}
