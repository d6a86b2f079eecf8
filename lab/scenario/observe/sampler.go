package observe

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// sampler is the loop both watchers share: a connection of its own (to
// the server, or to PgBouncer's admin console), a first sample before the
// loop starts, then one every interval on a goroutine of its own, each
// failure counted as a miss, and a last sample when it stops.
type sampler struct {
	cfg  *pgx.ConnConfig
	conn *pgx.Conn // nil while not connected
	// sample reads through conn once and folds what it read into the
	// watcher's view.
	sample func(ctx context.Context, conn *pgx.Conn) error
	// miss records a failed sample in the view; the loop calls it on its
	// own goroutine.
	miss func(err error)
	// reconnect: after a failed sample in the loop, close the connection
	// and connect again (a server that went away, a db_stop).
	reconnect bool
	tick      *ticker // nil until the loop starts
}

// connect opens the sampler's connection, within 2 s.
func (s *sampler) connect(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var err error
	s.conn, err = pgx.ConnectConfig(cctx, s.cfg)
	return err
}

// take samples once.
func (s *sampler) take(ctx context.Context) error {
	if s.conn == nil {
		return errors.New("not connected")
	}
	return s.sample(ctx, s.conn)
}

// start takes the first sample and, when it succeeds, starts the loop.
func (s *sampler) start(ctx context.Context, interval time.Duration) error {
	if err := s.take(ctx); err != nil {
		return err
	}
	s.tick = startTicker(ctx, interval, func() {
		if err := s.take(ctx); err != nil && ctx.Err() == nil {
			s.miss(err)
			if s.reconnect {
				if s.conn != nil {
					_ = s.conn.Close(ctx)
				}
				_ = s.connect(ctx)
			}
		}
	})
	return nil
}

// stop ends the loop and, when connected, takes a last sample (a failure
// is a miss); it reports whether it was connected. The connection stays
// open until close.
func (s *sampler) stop(ctx context.Context) bool {
	s.tick.stop()
	if s.conn == nil {
		return false
	}
	if err := s.take(ctx); err != nil {
		s.miss(err)
	}
	return true
}

// close closes the connection, if open.
func (s *sampler) close(ctx context.Context) {
	if s.conn != nil {
		_ = s.conn.Close(context.WithoutCancel(ctx))
	}
}

// ticker calls a function every interval on a goroutine of its own until
// stopped or its context ends.
type ticker struct {
	quit chan struct{} // closed by stop; a call in flight finishes first
	done chan struct{}
}

func startTicker(ctx context.Context, interval time.Duration, f func()) *ticker {
	t := &ticker{quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(t.done)
		tt := time.NewTicker(interval)
		defer tt.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.quit:
				return
			case <-tt.C:
				f()
			}
		}
	}()
	return t
}

// stop ends the calls and waits for one in flight (nothing for a nil t).
func (t *ticker) stop() {
	if t != nil {
		close(t.quit)
		<-t.done
	}
}
