package api

import (
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/orderlab/orderlab/services/internal/dberr"
	"github.com/orderlab/orderlab/services/internal/overload"
)

// faultProblem answers a database error of class c (README, Errors): a 503
// with Retry-After when the database is the problem, whether or not the
// request could have left anything behind; a 409 for a conflict; a 500
// only for what remains, which is a bug. It reports false for the classes
// it leaves to the caller (Deadline, Other). During an outage every request
// gets one of these, so the bodies are rendered once and nothing is logged
// but an order of unknown outcome.
func faultProblem(c *gin.Context, log *slog.Logger, e *dberr.Error, err error) bool {
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
			Type: problemBase + "pool-exhausted", Title: "Database pool exhausted", Status: http.StatusServiceUnavailable,
			Detail: fmt.Sprintf("database pool exhausted: no connection within %s", e.Waited.Round(time.Millisecond)), WaitedSeconds: &w,
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
		Type: problemBase + "database-unavailable", Title: "Database unavailable", Status: http.StatusServiceUnavailable,
		Detail: "the database could not be reached, or the connection broke before anything was committed: " +
			"the request had no effect; retry after the Retry-After header's seconds",
	})
	unknownKeyedBody = renderProblem(Problem{
		Type: problemBase + "outcome-unknown", Title: "Outcome unknown", Status: http.StatusServiceUnavailable,
		Detail: "the connection to the database broke after the order was sent, and a second attempt failed too: " +
			"the order may or may not be stored; send it again with the same Idempotency-Key, " +
			"which stores it at most once and returns it",
	})
	unknownUnkeyedBody = renderProblem(Problem{
		Type: problemBase + "outcome-unknown", Title: "Outcome unknown", Status: http.StatusServiceUnavailable,
		Detail: "the connection to the database broke after the order was sent: the order may or may not be stored; " +
			"this request had no Idempotency-Key, so sending it again may store it twice " +
			"(send orders with an Idempotency-Key to make a resend safe)",
	})
	conflictBody = renderProblem(Problem{
		Type: problemBase + "conflict", Title: "Conflict", Status: http.StatusConflict,
		Detail: "the database refused the order as conflicting with stored data; nothing was stored",
	})
)
