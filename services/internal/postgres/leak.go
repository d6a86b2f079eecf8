package postgres

import (
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5/pgxpool"
)

// leak is the connection-leak pitfall (docs/scenarios: connection-leak) on purpose:
// with every set (LEAK_EVERY), every every-th database call that got a
// connection keeps it, as code that forgets rows.Close() or conn.Release()
// on one path does. The call itself succeeds; the pool is one connection
// smaller for good. The connections are kept here only so that Close can
// give them back (pgxpool's Close waits for every acquired connection); a
// real leak would not even have that.
type leak struct {
	every int64
	calls atomic.Int64

	mu   sync.Mutex
	kept []*pgxpool.Conn
}

// release gives conn back to the pool, unless this call is one to leak.
func (s *Store) release(conn *pgxpool.Conn) {
	l := &s.leak
	if l.every <= 0 || l.calls.Add(1)%l.every != 0 {
		conn.Release()
		return
	}
	l.mu.Lock()
	l.kept = append(l.kept, conn)
	l.mu.Unlock()
}

// releaseAll gives every leaked connection back.
func (l *leak) releaseAll() {
	l.mu.Lock()
	kept := l.kept
	l.kept = nil
	l.mu.Unlock()
	for _, c := range kept {
		c.Release()
	}
}
