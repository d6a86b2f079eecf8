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

	"github.com/orderlab/orderlab/services/internal/model"
	"github.com/orderlab/orderlab/services/internal/order"
)

// handler serves a route nothing admits: it returns the status and body of
// its success, or the error that is the answer (writeError). It writes
// nothing itself: serve writes its answer, once.
type handler func(c *gin.Context) (status int, body any, err error)

func serve(log *slog.Logger, h handler) gin.HandlerFunc {
	return func(c *gin.Context) {
		status, body, err := h(c)
		answer(c, log, status, body, err)
	}
}

// answer writes a handler's outcome: its error's problem, or body as JSON.
func answer(c *gin.Context, log *slog.Logger, status int, body any, err error) {
	if err != nil {
		writeError(c, log, err)
		return
	}
	c.JSON(status, body)
}

// placeOrder: POST /orders[?db_delay=50ms][&api_delay=150ms&api_call=before|inside]
// with an order.Input body and an optional Idempotency-Key. 201 with the
// stored order; 200 with the same order when the key and body were seen
// before; 422 when the key was used with another body. With api_delay the
// order also waits for a downstream call, before its transaction or inside
// it (pitfalls.go).
func placeOrder(live *LiveConfig, met *metrics) admittedHandler {
	return func(c *gin.Context, a model.Admitted) (int, any, error) {
		q, err := parseQuery(c.Request.URL.RawQuery, "db_delay", "api_delay", "api_call")
		if err != nil {
			return 0, nil, err
		}
		delay, err := q.duration("db_delay", live.Load().DBDelay)
		if err != nil {
			return 0, nil, err
		}
		apiDelay, inside, err := q.downstream()
		if err != nil {
			return 0, nil, err
		}
		key, err := idempotencyKey(c.Request.Header)
		if err != nil {
			return 0, nil, err
		}
		in, err := decodeOrder(c.Writer, c.Request)
		if err != nil {
			return 0, nil, err
		}
		if err := in.Validate(); err != nil {
			return 0, nil, err
		}
		var downstream time.Duration
		if inside {
			downstream = apiDelay
		} else if err := callDownstream(c.Request.Context(), apiDelay); err != nil {
			return 0, nil, timeoutProblem(err, "; nothing was stored")
		}
		r, err := a.PlaceOrder(c.Request.Context(), in, key, delay, downstream)
		if err != nil {
			return 0, nil, err
		}
		if !r.Created {
			return http.StatusOK, r.Order, nil
		}
		met.ordersCreated.Inc()
		c.Header("Location", fmt.Sprintf("/orders/%d", r.Order.ID))
		return http.StatusCreated, r.Order, nil
	}
}

// getOrder: GET /orders/{id}.
func getOrder(c *gin.Context, a model.Admitted) (int, any, error) {
	if _, err := parseQuery(c.Request.URL.RawQuery); err != nil {
		return 0, nil, err
	}
	id, err := pathID(c.Param("id"))
	if err != nil {
		return 0, nil, err
	}
	o, err := a.GetOrder(c.Request.Context(), id)
	if errors.Is(err, order.ErrNotFound) {
		return 0, nil, orderNotFound(id)
	}
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, o, nil
}

// workResponse answers the experiment endpoints, /work/*.
type workResponse struct {
	Held   string `json:"held,omitempty"`
	Waited string `json:"waited,omitempty"`
	Rounds int    `json:"rounds,omitempty"`
	Digest string `json:"digest,omitempty"`
}

// workDB: GET /work/db?delay=20ms[&conns=2] holds a pooled connection for
// delay, through the service's concurrency model (scenario wrk-500,
// DB-bound); with conns, that many at once (pitfalls.go).
func workDB(live *LiveConfig) admittedHandler {
	return func(c *gin.Context, a model.Admitted) (int, any, error) {
		q, err := parseQuery(c.Request.URL.RawQuery, "delay", "conns")
		if err != nil {
			return 0, nil, err
		}
		d, err := q.duration("delay", live.Load().WorkDBDelay)
		if err != nil {
			return 0, nil, err
		}
		conns, err := q.integer("conns", 1, 1, MaxConns)
		if err != nil {
			return 0, nil, err
		}
		if err := a.HoldConnection(c.Request.Context(), d, int(conns)); err != nil {
			return 0, nil, err
		}
		return http.StatusOK, workResponse{Held: d.String()}, nil
	}
}

// workAPI: GET /work/api?delay=150ms waits without touching the database,
// like a call to a slow downstream (scenario wrk-500, API-bound). With
// API_WAIT_MODE=syscall the wait is a blocking nanosleep that holds its OS
// thread, the Go shape of a pinned virtual thread (docs/scenarios:
// os-thread-pinning): go_threads climbs.
func workAPI(live *LiveConfig) handler {
	return func(c *gin.Context) (int, any, error) {
		k := live.Load()
		q, err := parseQuery(c.Request.URL.RawQuery, "delay")
		if err != nil {
			return 0, nil, err
		}
		d, err := q.duration("delay", k.WorkAPIDelay)
		if err != nil {
			return 0, nil, err
		}
		if k.APIWaitMode == "syscall" {
			blockingSleep(d)
		} else if err := callDownstream(c.Request.Context(), d); err != nil {
			return 0, nil, err // the deadline: a timeout
		}
		return http.StatusOK, workResponse{Waited: d.String()}, nil
	}
}

// workCPU: GET /work/cpu?rounds=5000 chains SHA-256 rounds (scenario wrk-500,
// CPU-bound) and returns the final digest.
func workCPU(live *LiveConfig) handler {
	return func(c *gin.Context) (int, any, error) {
		q, err := parseQuery(c.Request.URL.RawQuery, "rounds")
		if err != nil {
			return 0, nil, err
		}
		n, err := q.integer("rounds", int64(live.Load().WorkCPURounds), 1, MaxCPURounds)
		if err != nil {
			return 0, nil, err
		}
		rounds := int(n)
		sum := sha256.Sum256([]byte("orderlab"))
		for i := 1; i < rounds; i++ {
			sum = sha256.Sum256(sum[:])
		}
		return http.StatusOK, workResponse{Rounds: rounds, Digest: hex.EncodeToString(sum[:])}, nil
	}
}

func livez(*gin.Context) (int, any, error) { return http.StatusOK, gin.H{"status": "ok"}, nil }

// readyz: 200 when the service takes traffic and Postgres answers within
// ReadyTimeout; otherwise 503, database-unavailable when Postgres is the
// reason.
func readyz(db Pinger, ready func() bool) handler {
	return func(c *gin.Context) (int, any, error) {
		if !ready() {
			return 0, nil, notReady()
		}
		ctx, cancel := context.WithTimeout(c.Request.Context(), ReadyTimeout)
		defer cancel()
		if err := db.Ping(ctx); err != nil {
			return 0, nil, databaseNotReady(err)
		}
		return http.StatusOK, gin.H{"status": "ready"}, nil
	}
}

// ReadyTimeout bounds /readyz's ping: a database that does not answer
// within it is reported unavailable, as a probe with Kubernetes' default
// one-second timeout would conclude anyway.
const ReadyTimeout = time.Second
