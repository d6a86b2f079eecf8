package postgres

import (
	"cmp"
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/exaring/otelpgx"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/orderlab/orderlab/services/internal/telemetry"
)

// poolTracer adds Prometheus histograms of each acquire's wait and each
// connection's hold time to otelpgx's spans.
//
// pgxpool finds its AcquireTracer and ReleaseTracer by type assertions on
// ConnConfig.Tracer, so this one type must carry every hook: the query, batch,
// copy, connect and prepare hooks come from the embedded otelpgx tracer, and
// the acquire hooks call through to it after recording.
type poolTracer struct {
	*otelpgx.Tracer
	wait *prometheus.HistogramVec
	hold *prometheus.HistogramVec // by outcome: holdOK, holdError, holdLeaked
	// statements is the time acquired connections spent running
	// statements (statements.go).
	statements prometheus.Counter
	// acquiring counts goroutines inside pgxpool.Acquire now: under
	// starvation, the queue in front of the pool.
	acquiring    atomic.Int64
	acquiringDsc *prometheus.Desc
	// longestDsc is the age of the oldest entry of held: a leaked
	// connection makes it grow without end (docs/scenarios: connection-leak).
	longestDsc *prometheus.Desc

	mu   sync.Mutex
	held map[*pgx.Conn]heldConn // each acquired connection

	// dialed holds when each open connection began to connect (*pgx.Conn
	// to time.Time), for a retry that wants a connection begun after its
	// failure (Store.acquire).
	dialed sync.Map
}

var (
	_ pgx.QueryTracer       = (*poolTracer)(nil)
	_ pgx.BatchTracer       = (*poolTracer)(nil)
	_ pgx.CopyFromTracer    = (*poolTracer)(nil)
	_ pgx.ConnectTracer     = (*poolTracer)(nil)
	_ pgx.PrepareTracer     = (*poolTracer)(nil)
	_ pgxpool.AcquireTracer = (*poolTracer)(nil)
	_ pgxpool.ReleaseTracer = (*poolTracer)(nil)
	_ prometheus.Collector  = (*poolTracer)(nil)
)

// heldConn is when a connection was acquired, from which pool, and what
// became of the call that held it (settle; empty until then).
type heldConn struct {
	since   time.Time
	pool    *pgxpool.Pool
	outcome string
}

// The outcomes of a connection hold, the label of
// orderlab_db_pool_connection_hold_seconds. Only the ok holds are the
// pool's productive use: a starved pool is busy too, with calls that run
// into their deadline (docs/metrics.md).
const (
	holdOK     = "ok"     // the call succeeded: its transaction committed, its read answered
	holdError  = "error"  // the call failed with a database error, or gave the connection back without a call
	holdLeaked = "leaked" // kept on purpose (LEAK_EVERY) until given back
)

type (
	acquireStartKey struct{}
	connectStartKey struct{}
)

func newPoolTracer(tp trace.TracerProvider) *poolTracer {
	return &poolTracer{
		Tracer: otelpgx.NewTracer(
			otelpgx.WithTracerProvider(tp),
			otelpgx.WithDisableConnectionDetailsInAttributes(),
		),
		wait: prometheus.NewHistogramVec(telemetry.DurationHistogram("orderlab_db_pool_acquire_wait_seconds",
			"Time each pgxpool Acquire waited for a connection, by outcome (ok, canceled, error).",
			waitBuckets), []string{"outcome"}),
		hold: prometheus.NewHistogramVec(telemetry.DurationHistogram("orderlab_db_pool_connection_hold_seconds",
			"Time from acquiring a pooled connection to releasing it, by outcome of the call that held it (ok, error, leaked).",
			waitBuckets), []string{"outcome"}),
		statements: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "orderlab_db_pool_statement_seconds_total",
			Help: "Time acquired pool connections spent running statements, batches and copies, start to end; over the hold time (orderlab_db_pool_connection_hold_seconds_sum), the share of a hold spent in the database.",
		}),
		held: make(map[*pgx.Conn]heldConn),
		acquiringDsc: prometheus.NewDesc("orderlab_db_pool_acquires_in_progress",
			"Goroutines waiting in pgxpool.Acquire now (for an idle or a new connection).", nil, nil),
		longestDsc: prometheus.NewDesc("orderlab_db_pool_longest_hold_seconds",
			"Age of the longest-held acquired connection now (0 when none is acquired). A connection that is never released makes it grow without end.", nil, nil),
	}
}

// waitBuckets span 100µs to 60s, for waits from "idle connection at hand" to
// "starved until the request deadline".
var waitBuckets = []float64{
	0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
	0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60,
}

// TraceAcquireStart implements pgxpool.AcquireTracer.
func (t *poolTracer) TraceAcquireStart(ctx context.Context, pool *pgxpool.Pool, data pgxpool.TraceAcquireStartData) context.Context {
	t.acquiring.Add(1)
	ctx = context.WithValue(ctx, acquireStartKey{}, time.Now())
	return t.Tracer.TraceAcquireStart(ctx, pool, data)
}

// TraceAcquireEnd implements pgxpool.AcquireTracer.
func (t *poolTracer) TraceAcquireEnd(ctx context.Context, pool *pgxpool.Pool, data pgxpool.TraceAcquireEndData) {
	now := time.Now()
	t.acquiring.Add(-1)
	if start, ok := ctx.Value(acquireStartKey{}).(time.Time); ok {
		outcome := "ok"
		switch {
		case data.Err == nil:
		case errors.Is(data.Err, context.Canceled), errors.Is(data.Err, context.DeadlineExceeded):
			outcome = "canceled"
		default:
			outcome = "error"
		}
		telemetry.Observe(ctx, t.wait.WithLabelValues(outcome), now.Sub(start).Seconds())
	}
	if data.Err == nil && data.Conn != nil {
		t.mu.Lock()
		t.held[data.Conn] = heldConn{since: now, pool: pool}
		t.mu.Unlock()
	}
	t.Tracer.TraceAcquireEnd(ctx, pool, data)
}

// TraceConnectStart implements pgx.ConnectTracer.
func (t *poolTracer) TraceConnectStart(ctx context.Context, data pgx.TraceConnectStartData) context.Context {
	ctx = context.WithValue(ctx, connectStartKey{}, time.Now())
	return t.Tracer.TraceConnectStart(ctx, data)
}

// TraceConnectEnd implements pgx.ConnectTracer.
func (t *poolTracer) TraceConnectEnd(ctx context.Context, data pgx.TraceConnectEndData) {
	if start, ok := ctx.Value(connectStartKey{}).(time.Time); ok && data.Err == nil && data.Conn != nil {
		t.dialed.Store(data.Conn, start)
	}
	t.Tracer.TraceConnectEnd(ctx, data)
}

// poolOf is the pool that c was acquired from, while it is held.
func (t *poolTracer) poolOf(c *pgx.Conn) *pgxpool.Pool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.held[c].pool
}

// dialedAfter says whether c began to connect after when.
func (t *poolTracer) dialedAfter(c *pgx.Conn, when time.Time) bool {
	start, ok := t.dialed.Load(c)
	return ok && start.(time.Time).After(when)
}

// settle records what became of the call that holds c, for its hold's
// outcome label when c is released.
func (t *poolTracer) settle(c *pgx.Conn, outcome string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if h, ok := t.held[c]; ok {
		h.outcome = outcome
		t.held[c] = h
	}
}

// TraceRelease implements pgxpool.ReleaseTracer.
func (t *poolTracer) TraceRelease(_ *pgxpool.Pool, data pgxpool.TraceReleaseData) {
	t.mu.Lock()
	h, ok := t.held[data.Conn]
	delete(t.held, data.Conn)
	t.mu.Unlock()
	if ok {
		t.hold.WithLabelValues(cmp.Or(h.outcome, holdError)).Observe(time.Since(h.since).Seconds())
	}
}

// Describe implements prometheus.Collector.
func (t *poolTracer) Describe(ch chan<- *prometheus.Desc) {
	t.wait.Describe(ch)
	t.hold.Describe(ch)
	t.statements.Describe(ch)
	ch <- t.acquiringDsc
	ch <- t.longestDsc
}

// Collect implements prometheus.Collector.
func (t *poolTracer) Collect(ch chan<- prometheus.Metric) {
	t.wait.Collect(ch)
	t.hold.Collect(ch)
	t.statements.Collect(ch)
	ch <- prometheus.MustNewConstMetric(t.acquiringDsc, prometheus.GaugeValue, float64(t.acquiring.Load()))
	ch <- prometheus.MustNewConstMetric(t.longestDsc, prometheus.GaugeValue, t.longestHold(time.Now()).Seconds())
}

// longestHold is how long the connection acquired longest ago has been
// held at now; 0 when none is.
func (t *poolTracer) longestHold(now time.Time) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	var longest time.Duration
	for _, h := range t.held {
		longest = max(longest, now.Sub(h.since))
	}
	return longest
}
