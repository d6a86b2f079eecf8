package attack

import (
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Result is what one run measured. Histograms hold microseconds (see
// [NewHistogram]). Results of runs against the same target, even from
// different machines, can be combined with [Result.Merge].
type Result struct {
	Mode     Mode
	Started  time.Time     // when the first request was due
	Elapsed  time.Duration // from Started to the last answer
	Sent     int64         // requests that got an answer or an error
	Status   map[int]int64 // answers per HTTP status code
	Errors   map[string]int64
	Late     int64 // open: requests due while no worker was free to send them, Unsent included
	Unsent   int64 // open: requests due within the run that were never sent, not even in the drain after it
	Retries  int64 // requests sent again: after a refused connection, or a 429/503 under a retry policy
	Canceled int64 // requests abandoned because the run was canceled
	// Throttled counts attempts the client's own adaptive throttler
	// refused, never sent (RetryThrottle); OverBudget, rejections not sent
	// again because the retry budget was spent (RetryBudget) or the token
	// bucket was at half or below (RetryTokenBucket).
	Throttled, OverBudget int64

	// Latency from the intended send time (corrected) and from the actual
	// send time (uncorrected). In closed and burst runs the intended time
	// is when a worker became ready, so the two agree up to retries.
	Success, SuccessUncorrected   *hdr.Histogram // 1xx-3xx
	Rejected, RejectedUncorrected *hdr.Histogram // 429 and 503
	Failed                        *hdr.Histogram // other 4xx and 5xx, corrected
	// SchedulerLag is the generator's own lateness: in an open run the
	// actual minus the intended send time of every request, in a closed
	// run the time from an answer to the next request on its connection.
	SchedulerLag *hdr.Histogram

	// WarmupErrors counts the requests of burst's warm-up round that failed.
	WarmupErrors int64
}

// NewResult returns an empty Result, ready to merge others into.
func NewResult() *Result {
	return &Result{
		Status:              make(map[int]int64),
		Errors:              make(map[string]int64),
		Success:             NewHistogram(),
		SuccessUncorrected:  NewHistogram(),
		Rejected:            NewHistogram(),
		RejectedUncorrected: NewHistogram(),
		Failed:              NewHistogram(),
		SchedulerLag:        NewHistogram(),
	}
}

// Merge adds o's counts and histograms to r. Started becomes the earlier
// start and Elapsed the later end, as if both runs were one.
func (r *Result) Merge(o *Result) {
	if r.Mode == "" {
		r.Mode = o.Mode
	}
	if !o.Started.IsZero() {
		end := r.Started.Add(r.Elapsed)
		if oe := o.Started.Add(o.Elapsed); r.Started.IsZero() || oe.After(end) {
			end = oe
		}
		if r.Started.IsZero() || o.Started.Before(r.Started) {
			r.Started = o.Started
		}
		r.Elapsed = end.Sub(r.Started)
	}
	r.Sent += o.Sent
	r.Late += o.Late
	r.Unsent += o.Unsent
	r.Retries += o.Retries
	r.Canceled += o.Canceled
	r.Throttled += o.Throttled
	r.OverBudget += o.OverBudget
	r.WarmupErrors += o.WarmupErrors
	for k, v := range o.Status {
		r.Status[k] += v
	}
	for k, v := range o.Errors {
		r.Errors[k] += v
	}
	r.Success.Merge(o.Success)
	r.SuccessUncorrected.Merge(o.SuccessUncorrected)
	r.Rejected.Merge(o.Rejected)
	r.RejectedUncorrected.Merge(o.RejectedUncorrected)
	r.Failed.Merge(o.Failed)
	r.SchedulerLag.Merge(o.SchedulerLag)
}

// Answered returns how many requests got an HTTP answer.
func (r *Result) Answered() int64 {
	var n int64
	for _, v := range r.Status {
		n += v
	}
	return n
}

// ErrorCount returns how many requests got no HTTP answer.
func (r *Result) ErrorCount() int64 {
	var n int64
	for _, v := range r.Errors {
		n += v
	}
	return n
}

// Attempts returns how many times requests were sent, retries included
// (attempts the client's throttler refused were not sent).
func (r *Result) Attempts() int64 { return r.Sent + r.Retries - r.Throttled }

// Amplification returns the run's retry amplification: attempts sent over
// first attempts, one per request (attempts the client's throttler refused
// were not sent, so under RetryThrottle it can be below 1). 0 for a run
// with no request.
func (r *Result) Amplification() float64 {
	if r.Sent == 0 {
		return 0
	}
	return float64(r.Attempts()) / float64(r.Sent)
}

// Throughput returns answers per second over the run.
func (r *Result) Throughput() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Answered()) / r.Elapsed.Seconds()
}
