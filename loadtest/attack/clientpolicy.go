package attack

import (
	"errors"
	"fmt"
	"time"

	"github.com/failsafe-go/failsafe-go/adaptivethrottler"
	"github.com/failsafe-go/failsafe-go/budget"
)

// The two client fixes production clients reach for, both failsafe-go's
// and both shared by every worker of a run, as one client process shares
// them across its requests (docs/scenarios/retry-storm.md).

// Retry budget: retries at most RetryBudgetRate of the requests in flight
// (at least RetryBudgetMin retries at once); beyond it a rejection stands.
const (
	RetryBudgetRate = 0.2
	RetryBudgetMin  = 3
)

// Adaptive throttling, as the Google SRE book describes it: once fewer than
// ThrottleSuccessRate of the run's recent requests (over ThrottleWindow, and
// at least ThrottleMinRequests of them) were accepted, each new attempt is
// refused in the client with a probability that grows with the shortfall,
// up to ThrottleMaxRejection. A success rate of 0.5 is the book's K = 2:
// the client sends at most twice what the server accepts.
const (
	ThrottleSuccessRate  = 0.5
	ThrottleWindow       = 10 * time.Second
	ThrottleMinRequests  = 20
	ThrottleMaxRejection = 0.9
)

// errThrottled is an attempt the client's own throttler refused: it was
// never sent (report class "throttled").
var errThrottled = errors.New("refused by the client's adaptive throttler, not sent")

// permits is what failsafe-go's retry policy asks of a budget.Budget (its
// budget type has these methods; the retry policy's executor calls them
// the same way around each execution and each retry). attack drives its
// own retry loop, so it calls them itself.
type permits interface {
	budget.Budget
	RecordExecution()
	ReleaseExecution()
	TryAcquirePermit() bool
	ReleasePermit()
}

// newRetryBudget returns the run's retry budget.
func newRetryBudget() (permits, error) {
	b, ok := budget.NewBuilder().WithMaxRate(RetryBudgetRate).WithMinConcurrency(RetryBudgetMin).Build().(permits)
	if !ok {
		return nil, fmt.Errorf("failsafe-go's budget no longer has the permit methods its retry policy uses")
	}
	return b, nil
}

// newThrottler returns the run's adaptive throttler: an answer other than a
// 429 or 503 is an acceptance, a rejection or a transport error is not.
func newThrottler() adaptivethrottler.AdaptiveThrottler[int] {
	return adaptivethrottler.NewBuilder[int]().
		HandleIf(func(status int, err error) bool { return err != nil || IsRejection(status) }).
		WithFailureRateThreshold(1-ThrottleSuccessRate, ThrottleMinRequests, ThrottleWindow).
		WithMaxRejectionRate(ThrottleMaxRejection).
		Build()
}

// throttledWait is how long a worker waits after its throttler refused an
// attempt before it tries again: the full-jitter backoff of a refused
// connection, so that a client whose requests fail fast does not spin.
func throttledWait(w *worker, attempt int) time.Duration { return backoff(w.rng, attempt) }
