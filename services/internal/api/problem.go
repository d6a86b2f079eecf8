package api

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/orderlab/orderlab/services/internal/order"
)

// Problem is an RFC 9457 problem details body.
type Problem struct {
	Type   string             `json:"type"`
	Title  string             `json:"title"`
	Status int                `json:"status"`
	Detail string             `json:"detail,omitempty"`
	Errors []order.FieldError `json:"errors,omitempty"`
	// WaitedSeconds is how long the request waited for the pool
	// connection that never came, when that is the problem.
	WaitedSeconds *float64 `json:"waited_seconds,omitempty"`
}

const problemBase = "https://github.com/orderlab/orderlab/blob/main/README.md#problem-"

// writeProblem sends p as application/problem+json and stops the chain.
func writeProblem(c *gin.Context, p Problem) {
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

func invalid(c *gin.Context, field, detail string) {
	writeProblem(c, Problem{
		Type: problemBase + "invalid-request", Title: "Invalid request", Status: http.StatusBadRequest,
		Detail: field + ": " + detail, Errors: []order.FieldError{{Field: field, Detail: detail}},
	})
}

// BodyTooLarge is the problem of a body over MaxBodyBytes, rendered: the
// API's 413, which the nbio server also sends itself for a body it will
// not buffer (httpserver.Config.BodyTooLarge).
func BodyTooLarge() []byte { return renderProblem(bodyTooLarge()) }

// bodyTooLarge is the 413 of a body over MaxBodyBytes, whichever server
// or handler finds it.
func bodyTooLarge() Problem {
	return Problem{
		Type: problemBase + "body-too-large", Title: "Request body too large", Status: http.StatusRequestEntityTooLarge,
		Detail: fmt.Sprintf("the body must be at most %d bytes", MaxBodyBytes),
		Errors: []order.FieldError{{Field: "body", Detail: fmt.Sprintf("must be at most %d bytes", MaxBodyBytes)}},
	}
}
