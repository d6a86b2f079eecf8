package api

import (
	"encoding/json"
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
	// WaitedSeconds is how long the request waited for the resource that
	// ran out (pool, semaphore or queue), when that is the problem.
	WaitedSeconds *float64 `json:"waited_seconds,omitempty"`
}

const problemBase = "https://github.com/orderlab/orderlab/blob/main/README.md#problem-"

// writeProblem sends p as application/problem+json and stops the chain.
func writeProblem(c *gin.Context, p Problem) {
	if p.Type == "" {
		p.Type = "about:blank"
	}
	b, err := json.Marshal(p)
	if err != nil { // cannot happen: Problem holds strings and numbers
		c.AbortWithStatus(http.StatusInternalServerError)
		return
	}
	c.Abort()
	c.Data(p.Status, "application/problem+json", b)
}

func invalid(c *gin.Context, field, detail string) {
	writeProblem(c, Problem{
		Type: problemBase + "invalid-request", Title: "Invalid request", Status: http.StatusBadRequest,
		Detail: field + ": " + detail, Errors: []order.FieldError{{Field: field, Detail: detail}},
	})
}
