package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// The time acquired connections spend running statements, from a
// statement's (or batch's, or copy's) start to its end, beside their hold
// time: a connection held across something that is not the database (a
// downstream call inside a transaction, a wait for a second connection)
// holds without a statement (docs/pitfall-alerts.md). Statements on a
// connection the pool has not handed out (the readiness check's own) are
// not counted.

type statementStartKey struct{}

// statementStarted marks when a statement on conn began.
func (t *poolTracer) statementStarted(ctx context.Context) context.Context {
	return context.WithValue(ctx, statementStartKey{}, time.Now())
}

// statementEnded adds the statement's time when conn is acquired from the
// pool.
func (t *poolTracer) statementEnded(ctx context.Context, conn *pgx.Conn) {
	start, ok := ctx.Value(statementStartKey{}).(time.Time)
	if !ok {
		return
	}
	t.mu.Lock()
	_, held := t.held[conn]
	t.mu.Unlock()
	if held {
		t.statements.Add(time.Since(start).Seconds())
	}
}

// TraceQueryStart implements pgx.QueryTracer.
func (t *poolTracer) TraceQueryStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	return t.Tracer.TraceQueryStart(t.statementStarted(ctx), conn, data)
}

// TraceQueryEnd implements pgx.QueryTracer.
func (t *poolTracer) TraceQueryEnd(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryEndData) {
	t.statementEnded(ctx, conn)
	t.Tracer.TraceQueryEnd(ctx, conn, data)
}

// TraceBatchStart implements pgx.BatchTracer.
func (t *poolTracer) TraceBatchStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
	return t.Tracer.TraceBatchStart(t.statementStarted(ctx), conn, data)
}

// TraceBatchEnd implements pgx.BatchTracer.
func (t *poolTracer) TraceBatchEnd(ctx context.Context, conn *pgx.Conn, data pgx.TraceBatchEndData) {
	t.statementEnded(ctx, conn)
	t.Tracer.TraceBatchEnd(ctx, conn, data)
}

// TraceCopyFromStart implements pgx.CopyFromTracer.
func (t *poolTracer) TraceCopyFromStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceCopyFromStartData) context.Context {
	return t.Tracer.TraceCopyFromStart(t.statementStarted(ctx), conn, data)
}

// TraceCopyFromEnd implements pgx.CopyFromTracer.
func (t *poolTracer) TraceCopyFromEnd(ctx context.Context, conn *pgx.Conn, data pgx.TraceCopyFromEndData) {
	t.statementEnded(ctx, conn)
	t.Tracer.TraceCopyFromEnd(ctx, conn, data)
}
