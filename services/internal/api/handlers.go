package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/orderlab/orderlab/services/internal/dberr"
	"github.com/orderlab/orderlab/services/internal/model"
	"github.com/orderlab/orderlab/services/internal/order"
	"github.com/orderlab/orderlab/services/internal/overload"
)

// handlePlaceOrder: POST /orders[?db_delay=50ms][&api_delay=150ms&api_call=before|inside]
// with an order.Input body and an optional Idempotency-Key. 201 with the
// stored order; 200 with the same order when the key and body were seen
// before; 422 when the key was used with another body. With api_delay the
// order also waits for a downstream call, before its transaction or inside
// it (pitfalls.go).
func handlePlaceOrder(m model.Model, defaultDelay time.Duration, log *slog.Logger, met *metrics) gin.HandlerFunc {
	return func(c *gin.Context) {
		a, ok := admit(c, m, model.PlaceOrder, log)
		if !ok {
			return
		}
		defer a.Release()
		q, ok := parseQuery(c, "db_delay", "api_delay", "api_call")
		if !ok {
			return
		}
		delay, ok := q.duration(c, "db_delay", defaultDelay)
		if !ok {
			return
		}
		apiDelay, inside, ok := q.downstream(c)
		if !ok {
			return
		}
		key, ok := idempotencyKey(c)
		if !ok {
			return
		}
		in, ok := decodeOrder(c)
		if !ok {
			return
		}
		if err := in.Validate(); err != nil {
			validationProblem(c, err)
			return
		}
		var downstream time.Duration
		if inside {
			downstream = apiDelay
		} else if err := callDownstream(c.Request.Context(), apiDelay); err != nil {
			timeoutProblem(c, err, "; nothing was stored")
			return
		}
		r, err := a.PlaceOrder(c.Request.Context(), in, key, delay, downstream)
		if err != nil {
			backendProblem(c, log, err)
			return
		}
		status := http.StatusOK
		if r.Created {
			status = http.StatusCreated
			met.ordersCreated.Inc()
			c.Header("Location", fmt.Sprintf("/orders/%d", r.Order.ID))
		}
		c.JSON(status, r.Order)
	}
}

// handleGetOrder: GET /orders/{id}.
func handleGetOrder(m model.Model, log *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		a, ok := admit(c, m, model.GetOrder, log)
		if !ok {
			return
		}
		defer a.Release()
		if _, ok := parseQuery(c); !ok {
			return
		}
		id, ok := pathID(c)
		if !ok {
			return
		}
		o, err := a.GetOrder(c.Request.Context(), id)
		if errors.Is(err, order.ErrNotFound) {
			writeProblem(c, Problem{Title: "Not found", Status: http.StatusNotFound, Detail: fmt.Sprintf("no order with id %d", id)})
			return
		}
		if err != nil {
			backendProblem(c, log, err)
			return
		}
		c.JSON(http.StatusOK, o)
	}
}

// workResponse answers the experiment endpoints.
type workResponse struct {
	Held   string `json:"held,omitempty"`
	Waited string `json:"waited,omitempty"`
	Rounds int    `json:"rounds,omitempty"`
	Digest string `json:"digest,omitempty"`
}

// handleWorkDB: GET /work/db?delay=20ms[&conns=2] holds a pooled connection
// for delay, through the service's concurrency model (experiment B,
// DB-bound); with conns, that many at once (pitfalls.go).
func handleWorkDB(m model.Model, defaultDelay time.Duration, log *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		a, ok := admit(c, m, model.HoldConnection, log)
		if !ok {
			return
		}
		defer a.Release()
		q, ok := parseQuery(c, "delay", "conns")
		if !ok {
			return
		}
		d, ok := q.duration(c, "delay", defaultDelay)
		if !ok {
			return
		}
		conns, ok := q.integer(c, "conns", 1, 1, MaxConns)
		if !ok {
			return
		}
		if err := a.HoldConnection(c.Request.Context(), d, int(conns)); err != nil {
			backendProblem(c, log, err)
			return
		}
		c.JSON(http.StatusOK, workResponse{Held: d.String()})
	}
}

// handleWorkAPI: GET /work/api?delay=150ms waits without touching the
// database, like a call to a slow downstream (experiment B, API-bound).
// With inSyscall the wait is a blocking nanosleep that holds its OS thread,
// the Go shape of a pinned virtual thread (README, The pitfalls: 4): go_threads climbs.
func handleWorkAPI(defaultDelay time.Duration, inSyscall bool) gin.HandlerFunc {
	return func(c *gin.Context) {
		q, ok := parseQuery(c, "delay")
		if !ok {
			return
		}
		d, ok := q.duration(c, "delay", defaultDelay)
		if !ok {
			return
		}
		if inSyscall {
			blockingSleep(d)
			c.JSON(http.StatusOK, workResponse{Waited: d.String()})
			return
		}
		if err := callDownstream(c.Request.Context(), d); err != nil {
			timeoutProblem(c, err, "")
			return
		}
		c.JSON(http.StatusOK, workResponse{Waited: d.String()})
	}
}

// handleWorkCPU: GET /work/cpu?rounds=5000 chains SHA-256 rounds
// (experiment B, CPU-bound) and returns the final digest.
func handleWorkCPU(defaultRounds int) gin.HandlerFunc {
	return func(c *gin.Context) {
		q, ok := parseQuery(c, "rounds")
		if !ok {
			return
		}
		n, ok := q.integer(c, "rounds", int64(defaultRounds), 1, MaxCPURounds)
		if !ok {
			return
		}
		rounds := int(n)
		sum := sha256.Sum256([]byte("orderlab"))
		for i := 1; i < rounds; i++ {
			sum = sha256.Sum256(sum[:])
		}
		c.JSON(http.StatusOK, workResponse{Rounds: rounds, Digest: hex.EncodeToString(sum[:])})
	}
}

func handleLivez() gin.HandlerFunc {
	return func(c *gin.Context) { c.JSON(http.StatusOK, gin.H{"status": "ok"}) }
}

// handleReadyz: 200 when the service takes traffic and Postgres answers
// within ReadyTimeout; otherwise 503, database-unavailable when Postgres is
// the reason.
func handleReadyz(db Pinger, ready func() bool) gin.HandlerFunc {
	return func(c *gin.Context) {
		if !ready() {
			writeProblem(c, Problem{Title: "Not ready", Status: http.StatusServiceUnavailable, Detail: "shutting down"})
			return
		}
		ctx, cancel := context.WithTimeout(c.Request.Context(), ReadyTimeout)
		defer cancel()
		if err := db.Ping(ctx); err != nil {
			setRetryAfter(c, DatabaseRetryAfter)
			writeProblem(c, Problem{
				Type: problemBase + "database-unavailable", Title: "Not ready", Status: http.StatusServiceUnavailable,
				Detail: "postgres does not answer: " + err.Error(),
			})
			return
		}
		c.JSON(http.StatusOK, gin.H{"status": "ready"})
	}
}

// ReadyTimeout bounds /readyz's ping: a database that does not answer
// within it is reported unavailable, as a probe with Kubernetes' default
// one-second timeout would conclude anyway.
const ReadyTimeout = time.Second

// validationProblem answers a validation error (an *order.ValidationError)
// with a 400 naming every field at fault.
func validationProblem(c *gin.Context, err error) {
	var v *order.ValidationError
	if !errors.As(err, &v) {
		invalid(c, "body", err.Error())
		return
	}
	writeProblem(c, Problem{
		Type: problemBase + "invalid-request", Title: "Invalid request", Status: http.StatusBadRequest,
		Detail: v.Error(), Errors: v.Fields,
	})
}

// backendProblem answers an error from the concurrency model or the store.
func backendProblem(c *gin.Context, log *slog.Logger, err error) {
	var rejected *overload.RejectedError
	var dbErr *dberr.Error
	fromDB := errors.As(err, &dbErr)
	switch {
	case fromDB && faultProblem(c, log, dbErr, err):
	case errors.As(err, &rejected):
		rejectedProblem(c, rejected)
	case errors.Is(err, order.ErrIdempotencyConflict):
		writeProblem(c, Problem{
			Type: problemBase + "idempotency-conflict", Title: "Idempotency key reused", Status: http.StatusUnprocessableEntity,
			Detail: "this Idempotency-Key was used with a different request body",
			Errors: []order.FieldError{{Field: "Idempotency-Key", Detail: "was used with a different request body"}},
		})
	case fromDB && dbErr.Class == dberr.Deadline && c.Request.Method == http.MethodPost:
		// The deadline passed while the database ran the write.
		timeoutProblem(c, err, "; the order may or may not be stored: send it again with the same Idempotency-Key to find out")
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		timeoutProblem(c, err, "")
	case errors.Is(err, overload.ErrShuttingDown):
		setRetryAfter(c, overload.MinRetryAfter)
		writeProblem(c, Problem{Title: "Service unavailable", Status: http.StatusServiceUnavailable, Detail: err.Error()})
	default:
		log.ErrorContext(c.Request.Context(), "request failed", "route", c.FullPath(), "err", err)
		writeProblem(c, Problem{Title: "Internal server error", Status: http.StatusInternalServerError,
			Detail: "the request failed on an internal error, which was logged"})
	}
}

// timeoutProblem answers a request whose deadline passed; more is added to
// the detail.
func timeoutProblem(c *gin.Context, err error, more string) {
	writeProblem(c, Problem{
		Type: problemBase + "timeout", Title: "Request timed out", Status: http.StatusServiceUnavailable,
		Detail: "the request did not finish within its deadline: " + err.Error() + more,
	})
}
