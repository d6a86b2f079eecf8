// Package overload owns the errors a concurrency model returns when it sheds
// load, so that the HTTP layer can answer them the same way in every service.
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
	// Resource is what was full: "semaphore" or "queue".
	Resource string
	// Waited is how long the request waited before it was refused.
	Waited time.Duration
	// RetryAfter is the hint given to the client.
	RetryAfter time.Duration
}

func (e *RejectedError) Error() string {
	return fmt.Sprintf("%s full: rejected after waiting %s", e.Resource, e.Waited.Round(time.Microsecond))
}

// PoolTimeoutError says a request's deadline passed while it waited for a
// database connection: the pool is exhausted. It becomes a 503.
type PoolTimeoutError struct {
	Waited time.Duration
}

func (e *PoolTimeoutError) Error() string {
	return fmt.Sprintf("database pool exhausted: no connection within %s", e.Waited.Round(time.Millisecond))
}

// RetryAfter is the hint sent with every rejection. HTTP's Retry-After has
// whole seconds; one is the shortest honest value.
const RetryAfter = time.Second

// ErrShuttingDown is returned for work submitted after shutdown began. It
// becomes a 503.
var ErrShuttingDown = errors.New("service shutting down")
