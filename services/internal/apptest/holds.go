package apptest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/orderlab/orderlab/internal/poll"
	"github.com/orderlab/orderlab/services/internal/app"
)

// A hold keeps part of a running service busy until the test releases it,
// so that a test looks at the state it set up (a stage full, a permit
// held, audits pending) for as long as it needs, on a busy machine too,
// where a server-side sleep would end on its own while the test still
// works.

// HoldAudits is svc with its audit writes held until release is closed
// (audit.Recorder.HoldWrites): each write, once AUDIT_DELAY is over, waits
// for the test. Close release before the service stops: a shutdown waits
// for the audit writes.
func HoldAudits(svc app.Service, release <-chan struct{}) app.Service {
	held := svc
	held.Start = func(d app.Deps) (app.Build, error) {
		d.Audit.HoldWrites(release)
		return svc.Start(d)
	}
	return held
}

// HoldOrderWrites locks the orders table against writes (SHARE mode, in a
// transaction on the test's own connection) until release is called: the
// service's inserts wait on the real database, with their permits and
// stage slots held, until the test says. Reads go on. release is
// idempotent, and runs when the test ends, before the service stops.
func (i *Instance) HoldOrderWrites() (release func()) {
	i.t.Helper()
	ctx := context.Background()
	tx, err := i.DB.Begin(ctx)
	if err != nil {
		i.t.Fatalf("hold the orders table: %v", err)
	}
	if _, err := tx.Exec(ctx, "LOCK TABLE orders IN SHARE MODE"); err != nil {
		_ = tx.Rollback(ctx)
		i.t.Fatalf("hold the orders table: %v", err)
	}
	release = sync.OnceFunc(func() {
		if err := tx.Rollback(ctx); err != nil {
			i.t.Errorf("release the orders table: %v", err)
		}
	})
	i.t.Cleanup(release)
	return release
}

// AwaitHeldOrderWrites waits (at most 10 s, internal/poll) until n of the
// service's statements wait for the orders table HoldOrderWrites holds:
// each of them has its connection, and keeps it until the release.
func (i *Instance) AwaitHeldOrderWrites(n int) {
	i.t.Helper()
	poll.Until(i.t, 10*time.Second, fmt.Sprintf("%d inserts waiting for the held orders table", n), func() error {
		var waiting int
		err := i.DB.QueryRow(context.Background(), `
SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
WHERE c.relname = 'orders' AND NOT l.granted
  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&waiting)
		if err != nil {
			return err
		}
		if waiting != n {
			return fmt.Errorf("%d inserts waiting", waiting)
		}
		return nil
	})
}
