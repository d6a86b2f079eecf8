// Package api owns the HTTP surface shared by the three services: the routes,
// the handlers with their request and response types, input validation at
// the edge, problem+json errors and the HTTP metrics. The concurrency model
// is not here: it is the Backend each service passes in.
package api

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/contrib/instrumentation/github.com/gin-gonic/gin/otelgin"
	"go.opentelemetry.io/otel/trace"

	"github.com/orderlab/orderlab/services/internal/order"
	"github.com/orderlab/orderlab/services/internal/overload"
	"github.com/orderlab/orderlab/services/internal/telemetry"
)

// Backend is a concurrency model: how a request reaches the database.
type Backend interface {
	// Admit decides whether a request for w may enter, before its body is
	// read or anything is allocated for it, so that a request turned away
	// costs as little as a trivial route. It returns the request's ticket,
	// which the handler holds until it has answered and then releases; or
	// an *overload.RejectedError (429), overload.ErrShuttingDown (503), or
	// ctx's error.
	Admit(ctx context.Context, w overload.Work) (overload.Ticket, error)
	// PlaceOrder stores in, sleeping dbDelay inside the transaction and
	// waiting downstream there for a downstream call (api_call=inside,
	// README, The pitfalls: 11), and returns the stored order; created is
	// false for an idempotent replay.
	PlaceOrder(ctx context.Context, t overload.Ticket, in order.Input, idempotencyKey string, dbDelay, downstream time.Duration) (o order.Order, created bool, err error)
	// GetOrder returns the order with id, or order.ErrNotFound.
	GetOrder(ctx context.Context, t overload.Ticket, id int64) (order.Order, error)
	// HoldConnection holds conns database connections at once, each taken
	// while the ones before it are held (conns above 1: a nested acquire,
	// README, The pitfalls: 10), and runs pg_sleep(d) on the last.
	HoldConnection(ctx context.Context, t overload.Ticket, d time.Duration, conns int) error
}

// Pinger says whether the database is reachable.
type Pinger interface {
	Ping(ctx context.Context) error
}

// Config holds the API's knobs.
type Config struct {
	Service        string        // service name for spans and logs
	RequestTimeout time.Duration // deadline of every request (REQUEST_TIMEOUT)
	DBDelay        time.Duration // default db_delay on POST /orders (DB_DELAY)
	WorkDBDelay    time.Duration // default delay of /work/db (WORK_DB_DELAY)
	WorkAPIDelay   time.Duration // default delay of /work/api (WORK_API_DELAY)
	WorkCPURounds  int           // default rounds of /work/cpu (WORK_CPU_ROUNDS)
	// APIWaitMode is how /work/api waits: "timer" parks the goroutine,
	// "syscall" blocks an OS thread in nanosleep (API_WAIT_MODE).
	APIWaitMode string
	// BufferBytes, when positive, is a buffer every request allocates and
	// holds (REQUEST_BUFFER_BYTES); BufferPooled takes it from a sync.Pool.
	BufferBytes  int
	BufferPooled bool
}

// Caps on the experiment knobs, for the environment and the query alike.
const (
	MaxDelay     = 10 * time.Second
	MaxCPURounds = 1_000_000
	// MaxBufferBytes caps REQUEST_BUFFER_BYTES.
	MaxBufferBytes = 8 << 20
)

// NewServer returns the HTTP handler of a service. ready reports whether
// the service takes traffic (false while it drains).
func NewServer(cfg Config, backend Backend, db Pinger, ready func() bool,
	log *slog.Logger, reg prometheus.Registerer, tp trace.TracerProvider) (http.Handler, error) {
	m, err := newMetrics(reg)
	if err != nil {
		return nil, err
	}
	r := gin.New()
	r.HandleMethodNotAllowed = true
	r.ContextWithFallback = true // c.Done/c.Value follow the request's context
	r.Use(
		recovery(log),
		otelgin.Middleware(cfg.Service, otelgin.WithTracerProvider(tp), otelgin.WithPropagators(telemetry.Propagator)),
		m.instrument,
		timeout(cfg.RequestTimeout),
	)
	if cfg.BufferBytes > 0 {
		r.Use(requestBuffer(cfg.BufferBytes, cfg.BufferPooled))
	}
	r.NoRoute(func(c *gin.Context) {
		writeProblem(c, Problem{Title: "Not found", Status: http.StatusNotFound, Detail: "no route for " + c.Request.URL.Path})
	})
	r.NoMethod(func(c *gin.Context) {
		writeProblem(c, Problem{Title: "Method not allowed", Status: http.StatusMethodNotAllowed,
			Detail: c.Request.Method + " is not allowed on " + c.Request.URL.Path})
	})
	addRoutes(r, cfg, backend, db, ready, log, m)
	return r, nil
}

func init() { gin.SetMode(gin.ReleaseMode) }
