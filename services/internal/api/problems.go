package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/orderlab/orderlab/services/internal/dberr"
	"github.com/orderlab/orderlab/services/internal/order"
	"github.com/orderlab/orderlab/services/internal/overload"
)

// Every answer but a success is built in this file (docs/reference/api.md, Errors): each
// problem's type, status and words, and which error gets which answer
// (writeError). A handler returns its error; the request's helpers return a
// *Problem for what is wrong with the request; nothing else writes one.

// Problem is an RFC 9457 problem details body. As an error, it is what is
// wrong with a request, answered as it is.
type Problem struct {
	Type   string             `json:"type"`
	Title  string             `json:"title"`
	Status int                `json:"status"`
	Detail string             `json:"detail,omitempty"`
	Errors []order.FieldError `json:"errors,omitempty"`
	// WaitedSeconds is how long the request waited for the pool
	// connection that never came, when that is the problem.
	WaitedSeconds *float64 `json:"waited_seconds,omitempty"`
	// retryAfter, when positive, is sent as the Retry-After header.
	retryAfter time.Duration
}

func (p *Problem) Error() string { return fmt.Sprintf("%d %s: %s", p.Status, p.Title, p.Detail) }

// ProblemBase begins every problem type URI: the heading of each type in
// docs/reference/api.md (the fault suite compares answers against it).
const ProblemBase = "https://github.com/orderlab/orderlab/blob/main/docs/reference/api.md#problem-"

// writeError answers err and stops the chain: a *Problem as it is; an
// error of the order's validation as a 400 naming every field at fault;
// a rejection, a database error or a deadline as docs/reference/api.md, Errors says; the
// rest, a bug, as a logged 500.
func writeError(c *gin.Context, log *slog.Logger, err error) {
	var p *Problem
	var invalidOrder *order.ValidationError
	var rejected *overload.RejectedError
	var dbErr *dberr.Error
	fromDB := errors.As(err, &dbErr)
	switch {
	case errors.As(err, &p):
		writeProblem(c, *p)
	case errors.As(err, &invalidOrder):
		writeProblem(c, Problem{
			Type: ProblemBase + "invalid-request", Title: "Invalid request", Status: http.StatusBadRequest,
			Detail: invalidOrder.Error(), Errors: invalidOrder.Fields,
		})
	case fromDB && databaseProblem(c, log, dbErr, err):
	case errors.As(err, &rejected):
		rejectedProblem(c, rejected)
	case errors.Is(err, order.ErrIdempotencyConflict):
		writeProblem(c, Problem{
			Type: ProblemBase + "idempotency-conflict", Title: "Idempotency key reused", Status: http.StatusUnprocessableEntity,
			Detail: "this Idempotency-Key was used with a different request body",
			Errors: []order.FieldError{{Field: "Idempotency-Key", Detail: "was used with a different request body"}},
		})
	case fromDB && dbErr.Class == dberr.Deadline && c.Request.Method == http.MethodPost:
		// The deadline passed while the database ran the write.
		writeProblem(c, *timeoutProblem(err, "; the order may or may not be stored: send it again with the same Idempotency-Key to find out"))
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		writeProblem(c, *timeoutProblem(err, ""))
	case errors.Is(err, overload.ErrShuttingDown):
		writeProblem(c, Problem{Title: "Service unavailable", Status: http.StatusServiceUnavailable, Detail: err.Error(),
			retryAfter: overload.MinRetryAfter})
	default:
		log.ErrorContext(c.Request.Context(), "request failed", "route", c.FullPath(), "err", err)
		writeProblem(c, Problem{Title: "Internal server error", Status: http.StatusInternalServerError,
			Detail: "the request failed on an internal error, which was logged"})
	}
}

// databaseProblem answers err, whose database error is e (docs/reference/api.md, Errors): a 503 with
// Retry-After when the database is the problem, whether or not the request
// could have left anything behind; a 503 pool-exhausted when the pool had
// no connection in time; a 409 for a conflict. It reports false for the
// classes it leaves to writeError (Deadline, Refused, Other). During an
// outage every request gets one of these, so the bodies are rendered once
// and nothing is logged but an order of unknown outcome.
func databaseProblem(c *gin.Context, log *slog.Logger, e *dberr.Error, err error) bool {
	switch e.Class {
	case dberr.Unavailable, dberr.ConnectionLost:
		setRetryAfter(c, DatabaseRetryAfter)
		writeProblemBytes(c, http.StatusServiceUnavailable, unavailableBody)
	case dberr.OutcomeUnknown:
		keyed := c.GetHeader("Idempotency-Key") != ""
		log.WarnContext(c.Request.Context(), "order outcome unknown", "route", c.FullPath(), "idempotency_key", keyed, "err", err)
		setRetryAfter(c, DatabaseRetryAfter)
		body := unknownUnkeyedBody
		if keyed {
			body = unknownKeyedBody
		}
		writeProblemBytes(c, http.StatusServiceUnavailable, body)
	case dberr.Conflict:
		log.WarnContext(c.Request.Context(), "order conflicts with stored data", "route", c.FullPath(), "err", err)
		writeProblemBytes(c, http.StatusConflict, conflictBody)
	case dberr.PoolExhausted:
		w := e.Waited.Seconds()
		writeProblem(c, Problem{
			Type: ProblemBase + "pool-exhausted", Title: "Database pool exhausted", Status: http.StatusServiceUnavailable,
			Detail:        fmt.Sprintf("database pool exhausted: no connection within %s", e.Waited.Round(time.Millisecond)),
			WaitedSeconds: &w,
		})
	default:
		return false
	}
	return true
}

// DatabaseRetryAfter is the Retry-After of a database-unavailable or
// outcome-unknown answer: fixed, and short, since a refused connect costs
// next to nothing and a restarted database is back within seconds.
const DatabaseRetryAfter = overload.MinRetryAfter

var (
	unavailableBody = renderProblem(Problem{
		Type: ProblemBase + "database-unavailable", Title: "Database unavailable", Status: http.StatusServiceUnavailable,
		Detail: "the database could not be reached, or the connection broke before anything was committed: " +
			"the request had no effect; retry after the Retry-After header's seconds",
	})
	unknownKeyedBody = renderProblem(Problem{
		Type: ProblemBase + "outcome-unknown", Title: "Outcome unknown", Status: http.StatusServiceUnavailable,
		Detail: "the connection to the database broke after the order was sent, and a second attempt failed too: " +
			"the order may or may not be stored; send it again with the same Idempotency-Key, " +
			"which stores it at most once and returns it",
	})
	unknownUnkeyedBody = renderProblem(Problem{
		Type: ProblemBase + "outcome-unknown", Title: "Outcome unknown", Status: http.StatusServiceUnavailable,
		Detail: "the connection to the database broke after the order was sent: the order may or may not be stored; " +
			"this request had no Idempotency-Key, so sending it again may store it twice " +
			"(send orders with an Idempotency-Key to make a resend safe)",
	})
	conflictBody = renderProblem(Problem{
		Type: ProblemBase + "conflict", Title: "Conflict", Status: http.StatusConflict,
		Detail: "the database refused the order as conflicting with stored data; nothing was stored",
	})
)

// rejectedProblem answers a rejection as cheaply as a trivial route: the
// body is rendered once per resource and the Retry-After value is shared.
// Nothing is logged: the rejection is counted by the HTTP metrics and by
// the limiter's or the queue's rejection counter.
func rejectedProblem(c *gin.Context, r *overload.RejectedError) {
	c.Abort()
	writeRejection(c.Writer, r)
}

// writeRejection writes rejectedProblem's answer on any ResponseWriter.
func writeRejection(w http.ResponseWriter, r *overload.RejectedError) {
	h := w.Header()
	h["Retry-After"] = retryAfterHeader(r.RetryAfter)
	h["Content-Type"] = problemContentType
	w.WriteHeader(http.StatusTooManyRequests)
	_, _ = w.Write(rejectionBody(r.Resource))
}

// rejectionBody is the 429 body of resource, rendered on first use.
func rejectionBody(resource string) []byte {
	body, ok := rejectionBodies.Load(resource)
	if !ok {
		body, _ = rejectionBodies.LoadOrStore(resource, renderProblem(Problem{
			Type: ProblemBase + "overloaded", Title: "Too many requests", Status: http.StatusTooManyRequests,
			Detail: "the " + resource + " is full; retry after the Retry-After header's seconds",
		}))
	}
	return body.([]byte)
}

// rejectionBodies holds the 429 body of each resource, rendered on first use.
var rejectionBodies sync.Map

// invalid is a 400 that names the field at fault.
func invalid(field, detail string) *Problem {
	return &Problem{
		Type: ProblemBase + "invalid-request", Title: "Invalid request", Status: http.StatusBadRequest,
		Detail: field + ": " + detail, Errors: []order.FieldError{{Field: field, Detail: detail}},
	}
}

// unsupportedMediaType is the 415 of a body that is not JSON in UTF-8.
func unsupportedMediaType(contentType string) *Problem {
	return &Problem{
		Type: ProblemBase + "unsupported-media-type", Title: "Unsupported media type", Status: http.StatusUnsupportedMediaType,
		Detail: fmt.Sprintf("Content-Type %q: want application/json", contentType),
		Errors: []order.FieldError{{Field: "Content-Type", Detail: "must be application/json (charset utf-8, if any)"}},
	}
}

// BodyTooLarge is the problem of a body over MaxBodyBytes, rendered: the
// API's 413, which the nbio server also sends itself for a body it will
// not buffer (httpserver.Config.BodyTooLarge).
func BodyTooLarge() []byte { return renderProblem(*bodyTooLarge()) }

// bodyTooLarge is the 413 of a body over MaxBodyBytes, whichever server
// or handler finds it.
func bodyTooLarge() *Problem {
	return &Problem{
		Type: ProblemBase + "body-too-large", Title: "Request body too large", Status: http.StatusRequestEntityTooLarge,
		Detail: fmt.Sprintf("the body must be at most %d bytes", MaxBodyBytes),
		Errors: []order.FieldError{{Field: "body", Detail: fmt.Sprintf("must be at most %d bytes", MaxBodyBytes)}},
	}
}

// timeoutProblem is the 503 of a request whose deadline passed; more is
// added to the detail.
func timeoutProblem(err error, more string) *Problem {
	return &Problem{
		Type: ProblemBase + "timeout", Title: "Request timed out", Status: http.StatusServiceUnavailable,
		Detail: "the request did not finish within its deadline: " + err.Error() + more,
	}
}

// orderNotFound is the 404 of GET /orders/{id}.
func orderNotFound(id int64) *Problem {
	return &Problem{Title: "Not found", Status: http.StatusNotFound, Detail: fmt.Sprintf("no order with id %d", id)}
}

// noRoute and noMethod are the 404 and 405 of a request no route takes.
func noRoute(r *http.Request) *Problem {
	return &Problem{Title: "Not found", Status: http.StatusNotFound, Detail: "no route for " + r.URL.Path}
}

func noMethod(r *http.Request) *Problem {
	return &Problem{Title: "Method not allowed", Status: http.StatusMethodNotAllowed,
		Detail: r.Method + " is not allowed on " + r.URL.Path}
}

// notReady is /readyz's 503 while the service shuts down; databaseNotReady
// its 503 while Postgres does not answer.
func notReady() *Problem {
	return &Problem{Title: "Not ready", Status: http.StatusServiceUnavailable, Detail: "shutting down"}
}

func databaseNotReady(err error) *Problem {
	return &Problem{
		Type: ProblemBase + "database-unavailable", Title: "Not ready", Status: http.StatusServiceUnavailable,
		Detail: "postgres does not answer: " + err.Error(), retryAfter: DatabaseRetryAfter,
	}
}

// panicked is the 500 of a handler that panicked (recovery).
func panicked() Problem {
	return Problem{Title: "Internal server error", Status: http.StatusInternalServerError}
}

// writeProblem sends p as application/problem+json and stops the chain.
func writeProblem(c *gin.Context, p Problem) {
	if p.retryAfter > 0 {
		setRetryAfter(c, p.retryAfter)
	}
	writeProblemBytes(c, p.Status, renderProblem(p))
}

// renderProblem encodes p, with about:blank for a missing type.
func renderProblem(p Problem) []byte {
	if p.Type == "" {
		p.Type = "about:blank"
	}
	if w := p.WaitedSeconds; w != nil && (math.IsNaN(*w) || math.IsInf(*w, 0)) {
		p.WaitedSeconds = nil // JSON has no number for it
	}
	b, err := json.Marshal(p)
	if err != nil { // cannot happen: Problem holds strings and finite numbers
		panic(err)
	}
	return b
}

// problemContentType is shared by every problem answer: setting it
// allocates nothing.
var problemContentType = []string{"application/problem+json"}

// writeProblemBytes sends a rendered problem with status and stops the chain.
func writeProblemBytes(c *gin.Context, status int, body []byte) {
	c.Abort()
	c.Writer.Header()["Content-Type"] = problemContentType
	c.Writer.WriteHeader(status)
	_, _ = c.Writer.Write(body)
}

// retryAfterValues are the header values for 0..MaxRetryAfter seconds,
// shared by every answer so that setting the header allocates nothing.
var retryAfterValues = func() [][]string {
	vs := make([][]string, int(overload.MaxRetryAfter/time.Second)+1)
	for i := range vs {
		vs[i] = []string{strconv.Itoa(i)}
	}
	return vs
}()

// setRetryAfter sets Retry-After to d in whole seconds, rounded up, between
// MinRetryAfter and MaxRetryAfter.
func setRetryAfter(c *gin.Context, d time.Duration) {
	c.Writer.Header()["Retry-After"] = retryAfterHeader(d)
}

// retryAfterHeader is the shared header value of a Retry-After of d.
func retryAfterHeader(d time.Duration) []string {
	d = min(max(d, overload.MinRetryAfter), overload.MaxRetryAfter)
	return retryAfterValues[int((d+time.Second-1)/time.Second)]
}

// ServeProblem writes p as application/problem+json on a net/http
// ResponseWriter: the admin listener's answers (docs/reference/knobs.md)
// take the API's shape.
func ServeProblem(w http.ResponseWriter, p Problem) {
	w.Header()["Content-Type"] = problemContentType
	w.WriteHeader(p.Status)
	_, _ = w.Write(renderProblem(p))
}
