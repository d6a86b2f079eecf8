package postgres

import (
	"context"
	"fmt"
	"time"
)

// HoldConnection takes a pooled connection and holds it for d with pg_sleep:
// a database call that takes d. With conns above 1 it holds that many
// connections at once, each taken while the ones before it are held, as a
// call that needs a second connection before it gives back its first
// (docs/scenarios: nested-acquire). A broken connection is retried as a read is
// (retry.go): the call commits nothing.
func (s *Store) HoldConnection(ctx context.Context, d time.Duration, conns int) error {
	err := s.holdConnection(ctx, d, conns, time.Time{})
	if failed := time.Now(); s.retryRead(ctx, err) {
		err = s.holdConnection(ctx, d, conns, failed)
	}
	return readErr(err)
}

// holdConnection is one attempt of HoldConnection. With conns above 1 it
// keeps its connection while it takes the next one (the nested acquire),
// and runs the pg_sleep on the last.
func (s *Store) holdConnection(ctx context.Context, d time.Duration, conns int, after time.Time) (err error) {
	conn, err := s.acquire(ctx, after)
	if err != nil {
		return err
	}
	defer func() { s.release(conn, err) }()
	if conns > 1 {
		return s.holdConnection(ctx, d, conns-1, after)
	}
	if _, err := conn.Exec(ctx, "SELECT pg_sleep($1)", d.Seconds()); err != nil {
		return s.classified(ctx, fmt.Errorf("pg_sleep: %w", err), running, conn.Conn().IsClosed())
	}
	return nil
}
