package postgres

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/orderlab/orderlab/services/internal/dberr"
)

// leak is the connection-leak pitfall (docs/scenarios: connection-leak) on purpose:
// with every set (LEAK_EVERY), every every-th database call that got a
// connection keeps it, as code that forgets rows.Close() or conn.Release()
// on one path does. The call itself succeeds; the pool is one connection
// smaller for good. The connections are kept here only so that they can be
// given back (ReleaseLeaked, a resize, Close: pgxpool's Close waits for
// every acquired connection); a real leak would not even have that.
type leak struct {
	every atomic.Int64
	calls atomic.Int64

	mu   sync.Mutex
	kept []leaked
}

// leaked is a kept connection and the pool it came from.
type leaked struct {
	conn *pgxpool.Conn
	pool *pgxpool.Pool
}

// release gives conn back to the pool, unless this call is one to leak. A
// connection of a pool being replaced is always given back, so that the
// old pool can close (SetPoolSize). err is the call's: a database error
// (*dberr.Error) makes the hold an error one, anything else (nil, an order
// not found) an ok one.
func (s *Store) release(conn *pgxpool.Conn, err error) {
	outcome := holdOK
	// A call its caller gave up on (a canceled context, not a database
	// error) did not succeed either: its hold is not productive.
	if _, failed := dberr.ClassOf(err); failed || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		outcome = holdError
	}
	l := &s.leak
	every := l.every.Load()
	if every <= 0 || l.calls.Add(1)%every != 0 {
		s.tracer.settle(conn.Conn(), outcome)
		conn.Release()
		return
	}
	from := s.tracer.poolOf(conn.Conn())
	l.mu.Lock()
	if from != s.pool() {
		l.mu.Unlock()
		s.tracer.settle(conn.Conn(), outcome)
		conn.Release()
		return
	}
	s.tracer.settle(conn.Conn(), holdLeaked)
	l.kept = append(l.kept, leaked{conn: conn, pool: from})
	l.mu.Unlock()
}

// SetLeakEvery sets LEAK_EVERY: every n-th database call keeps its
// connection; 0 (or below) stops leaking. Connections already leaked stay
// leaked (ReleaseLeaked gives them back).
func (s *Store) SetLeakEvery(n int) { s.leak.every.Store(int64(max(n, 0))) }

// LeakEvery is LEAK_EVERY's current value.
func (s *Store) LeakEvery() int { return int(s.leak.every.Load()) }

// ReleaseLeaked gives back every connection leaked on purpose and returns
// how many there were.
func (s *Store) ReleaseLeaked() int { return s.leak.releaseFrom(nil) }

// releaseFrom gives back the leaked connections of pool, or all of them
// when pool is nil, and returns how many.
func (l *leak) releaseFrom(pool *pgxpool.Pool) int {
	l.mu.Lock()
	var give []leaked
	keep := l.kept[:0]
	for _, k := range l.kept {
		if pool == nil || k.pool == pool {
			give = append(give, k)
		} else {
			keep = append(keep, k)
		}
	}
	clear(l.kept[len(keep):])
	l.kept = keep
	l.mu.Unlock()
	for _, k := range give {
		k.conn.Release()
	}
	return len(give)
}
