package api

import (
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/orderlab/orderlab/services/internal/model"
	"github.com/orderlab/orderlab/services/internal/overload"
)

// admit asks the model to admit the request for op before anything else is
// done for it: no body read, no decoding, no allocation per order. When the
// answer is no it answers the request (429, or 503 while shutting down) and
// returns false.
func admit(c *gin.Context, m model.Model, op model.Op, log *slog.Logger) (model.Admitted, bool) {
	t, err := m.Admit(c.Request.Context(), op)
	if err != nil {
		backendProblem(c, log, err)
		return nil, false
	}
	return t, true
}

// rejectedProblem answers a rejection as cheaply as a trivial route: the
// body is rendered once per resource and the Retry-After value is shared.
// Nothing is logged: the rejection is counted by the HTTP metrics and by
// the limiter's or the queue's rejection counter.
func rejectedProblem(c *gin.Context, r *overload.RejectedError) {
	setRetryAfter(c, r.RetryAfter)
	body, ok := rejectionBodies.Load(r.Resource)
	if !ok {
		body, _ = rejectionBodies.LoadOrStore(r.Resource, renderProblem(Problem{
			Type: problemBase + "overloaded", Title: "Too many requests", Status: http.StatusTooManyRequests,
			Detail: "the " + r.Resource + " is full; retry after the Retry-After header's seconds",
		}))
	}
	writeProblemBytes(c, http.StatusTooManyRequests, body.([]byte))
}

// rejectionBodies holds the 429 body of each resource, rendered on first use.
var rejectionBodies sync.Map

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
	d = min(max(d, overload.MinRetryAfter), overload.MaxRetryAfter)
	s := int((d + time.Second - 1) / time.Second)
	c.Writer.Header()["Retry-After"] = retryAfterValues[s]
}
