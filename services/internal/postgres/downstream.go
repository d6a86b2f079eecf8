package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/orderlab/orderlab/services/internal/order"
)

// txAcrossDownstream runs the batch b of ns in an explicit transaction that
// first waits downstream for a (simulated) call to another service: BEGIN,
// the call, the inserts, COMMIT. The transaction holds its connection for
// the call too, so the pool's Little's-law bound falls from
// max_connections / db time to max_connections / (db + downstream) time
// (docs/scenarios: tx-across-downstream). pg_stat_activity shows the session "idle in
// transaction" while it waits.
//
// Errors are classified as createOrders' are, by phase: nothing is committed
// before the COMMIT is sent; a COMMIT that fails on a broken connection has
// an unknown outcome.
func (s *Store) txAcrossDownstream(ctx context.Context, conn *pgxpool.Conn, b *pgx.Batch, ns []order.Request,
	delay, downstream time.Duration) ([]order.Result, error) {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return nil, s.classified(ctx, fmt.Errorf("begin: %w", err), running, conn.Conn().IsClosed())
	}
	rollback := func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		_ = tx.Rollback(rctx) // a broken connection is closed by pgx anyway
	}
	t := time.NewTimer(downstream)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		rollback()
		return nil, s.classified(ctx, fmt.Errorf("downstream call inside the transaction: %w", ctx.Err()), running, false)
	}
	br := tx.SendBatch(ctx, b)
	results, err := readBatch(br, ns, delay)
	if cerr := br.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("insert orders: %w", cerr)
	}
	if err != nil {
		rollback()
		return nil, s.classified(ctx, err, running, conn.Conn().IsClosed())
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, s.classified(ctx, fmt.Errorf("commit: %w", err), committing, conn.Conn().IsClosed())
	}
	return results, nil
}
