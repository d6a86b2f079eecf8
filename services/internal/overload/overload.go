// Package overload owns how a concurrency model sheds load: the errors a
// model's Admit returns when it says no, and the Retry-After it derives from
// how fast what it holds is released (ReleaseRate), so that the HTTP layer
// answers them the same way in every service.
package overload

import (
	"errors"
	"fmt"
	"time"
)

// RejectedError says a request was refused at once (or after a short,
// bounded wait) because the service is at capacity. It becomes a 429 with a
// Retry-After header.
type RejectedError struct {
	// Resource is what was full: "semaphore", "queue" or "audit queue".
	Resource string
	// Waited is how long the request waited before it was refused.
	Waited time.Duration
	// RetryAfter is the hint given to the client (see ReleaseRate.RetryAfter).
	RetryAfter time.Duration
}

func (e *RejectedError) Error() string {
	return fmt.Sprintf("%s full: rejected after waiting %s", e.Resource, e.Waited.Round(time.Microsecond))
}

// ErrShuttingDown is returned for a request made after shutdown began. It
// becomes a 503 with a Retry-After of MinRetryAfter.
var ErrShuttingDown = errors.New("service shutting down")
