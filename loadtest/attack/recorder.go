package attack

import (
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram geometry: microseconds from 1 µs to one hour, 3 significant
// digits (0.1 % error). Every histogram of a run, and every histogram of
// every run that may be merged with it, has this geometry.
const (
	histLowest  = 1
	histHighest = int64(time.Hour / time.Microsecond)
	histDigits  = 3
)

// NewHistogram returns an empty latency histogram in microseconds with the
// geometry loadtest uses everywhere.
func NewHistogram() *hdr.Histogram { return hdr.New(histLowest, histHighest, histDigits) }

// record adds d to h, clamped to the histogram's range so that nothing is lost.
func record(h *hdr.Histogram, d time.Duration) {
	us := d.Microseconds()
	if us < histLowest {
		us = histLowest
	}
	if us > histHighest {
		us = histHighest
	}
	_ = h.RecordValue(us)
}

// recorder holds the measurements of a group of workers. HDR histograms are
// not safe for concurrent use, so each worker records into its group's
// recorder under its mutex; the lock is held for a few nanoseconds per
// request and shared by few workers, so it is almost never contended.
// Recorders are per group, not per goroutine, because one set of histograms
// takes about a megabyte and runs may have tens of thousands of workers.
type recorder struct {
	mu   sync.Mutex
	res  *Result
	last time.Time // when the last answer or error arrived
}

func newRecorder() *recorder { return &recorder{res: NewResult()} }

// outcome is what a worker learned from one request.
type outcome struct {
	due, sent, done time.Time
	// ready is when the generator meant to send: in an open run the due
	// time, in a closed run when the worker's previous answer arrived
	// (zero for its first request, and in an idle run; in a burst, the
	// release). sent-ready is the generator's own lateness.
	ready    time.Time
	status   int
	err      error
	late     bool // the request was due before a worker was free to send it
	canceled bool // the run was canceled while the request was in flight
	retries  int  // attempts before this outcome's final one: refused connections, and 429/503 answers with a retry policy
	// throttled counts this request's attempts that its client's throttler
	// refused (RetryThrottle): never sent, among the retries but the last.
	throttled int
	// overBudget: a 429/503 not sent again because the retry budget was
	// spent (RetryBudget) or the token bucket was at half or below
	// (RetryTokenBucket).
	overBudget bool
}

func (r *recorder) add(o outcome) {
	r.mu.Lock()
	defer r.mu.Unlock()
	res := r.res
	res.Retries += int64(o.retries)
	res.Throttled += int64(o.throttled)
	if o.overBudget {
		res.OverBudget++
	}
	if o.canceled {
		res.Canceled++
		return
	}
	res.Sent++
	if o.done.After(r.last) {
		r.last = o.done
	}
	if o.late {
		res.Late++
	}
	if !o.ready.IsZero() {
		record(res.SchedulerLag, o.sent.Sub(o.ready))
	}
	if o.err != nil {
		res.Errors[Classify(o.err).String()]++
		return
	}
	res.Status[o.status]++
	corrected, uncorrected := o.done.Sub(o.due), o.done.Sub(o.sent)
	switch {
	case IsRejection(o.status):
		record(res.Rejected, corrected)
		record(res.RejectedUncorrected, uncorrected)
	case o.status < 400:
		record(res.Success, corrected)
		record(res.SuccessUncorrected, uncorrected)
	default:
		record(res.Failed, corrected)
	}
}

// IsRejection reports whether status is a load-shedding answer: 429 (a
// limiter or a full queue said no) or 503 (the server gave up waiting for a
// resource). A fast rejection is not a fast success, so rejections have
// their own histograms.
func IsRejection(status int) bool { return status == 429 || status == 503 }
