// Package api owns the HTTP surface shared by the three services: the routes,
// the handlers with their request and response types, input validation at
// the edge, problem+json errors and the HTTP metrics. The concurrency model
// is not here: it is the model.Model each service passes in.
package api

import (
	"context"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/orderlab/orderlab/services/internal/model"
)

// Pinger says whether the database is reachable.
type Pinger interface {
	Ping(ctx context.Context) error
}

// Config holds the API's knobs (docs/reference/knobs.md), read per request
// from a LiveConfig so that they change live.
type Config struct {
	Service        string        // service name for spans and logs (fixed at start)
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
	// HoldEarlyRetries holds the 429 of a request that came back on its
	// connection before the Retry-After it was last given, until that
	// time is up (HOLD_EARLY_RETRIES; admission.go).
	HoldEarlyRetries bool
}

// Caps on the experiments' delays, rounds and buffer, whether a knob or the
// query sets them.
const (
	MaxDelay     = 10 * time.Second
	MaxCPURounds = 1_000_000
	// MaxBufferBytes caps REQUEST_BUFFER_BYTES.
	MaxBufferBytes = 8 << 20
)

// LiveConfig holds the API's live Config: every request reads one
// snapshot of it, and Store swaps in another without a lock.
type LiveConfig struct{ p atomic.Pointer[Config] }

// NewLiveConfig holds c.
func NewLiveConfig(c Config) *LiveConfig {
	k := &LiveConfig{}
	k.Store(c)
	return k
}

// Load returns the current snapshot; the caller must not modify it.
func (k *LiveConfig) Load() *Config { return k.p.Load() }

// Store makes c the snapshot the next requests read.
func (k *LiveConfig) Store(c Config) { k.p.Store(&c) }

// NewServer returns the HTTP handler of a service, its knobs read per
// request from live. ready reports whether the service takes traffic
// (false while it drains).
func NewServer(live *LiveConfig, m model.Model, db Pinger, ready func() bool,
	log *slog.Logger, reg prometheus.Registerer, tp trace.TracerProvider) (http.Handler, error) {
	met, err := newMetrics(reg)
	if err != nil {
		return nil, err
	}
	r := gin.New()
	r.HandleMethodNotAllowed = true
	r.ContextWithFallback = true // c.Done/c.Value follow the request's context
	r.Use(recovery(log), met.countRetried)
	obs := newObserver(live, met, tp)
	r.NoRoute(obs.observed, func(c *gin.Context) { writeProblem(c, *noRoute(c.Request)) })
	r.NoMethod(obs.observed, func(c *gin.Context) { writeProblem(c, *noMethod(c.Request)) })
	addRoutes(r, &admission{m: m, obs: obs, log: log}, db, ready)
	return r, nil
}

func init() { gin.SetMode(gin.ReleaseMode) }
