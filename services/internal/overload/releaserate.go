package overload

import (
	"math"
	"sync"
	"time"
)

// Retry-After bounds. HTTP's Retry-After has whole seconds (RFC 9110,
// section 10.2.3): one is the shortest honest value.
const (
	MinRetryAfter = time.Second
	MaxRetryAfter = time.Minute
)

// ReleaseRate measures how fast a resource frees up (permits given back,
// queue slots emptied) over the last second, so that a rejection can say
// when the client should come back: RetryAfter. Released is called once per
// freed unit, on the hot path: it costs a clock read and an uncontended
// lock.
type ReleaseRate struct {
	mu     sync.Mutex
	slot   int64                // the current slot: monotonic time / rateSlot
	counts [rateSlots + 1]int64 // releases per slot, a ring
	start  time.Time
	now    func() time.Time // time.Now; a test's clock in tests
}

const (
	rateSlot  = 250 * time.Millisecond
	rateSlots = 4 // the window: rateSlots complete slots = 1 s
)

// NewReleaseRate returns a ReleaseRate that has counted nothing.
func NewReleaseRate() *ReleaseRate { return &ReleaseRate{start: time.Now(), now: time.Now} }

// Released counts one freed unit.
func (r *ReleaseRate) Released() {
	r.mu.Lock()
	r.advance(r.now())
	r.counts[r.slot%int64(len(r.counts))]++
	r.mu.Unlock()
}

// advance moves the ring to now's slot, zeroing the slots it skips.
func (r *ReleaseRate) advance(now time.Time) {
	s := int64(now.Sub(r.start) / rateSlot)
	for i := r.slot + 1; i <= s && i <= r.slot+int64(len(r.counts)); i++ {
		r.counts[i%int64(len(r.counts))] = 0
	}
	if s > r.slot {
		r.slot = s
	}
}

// PerSecond is the units freed per second over the last complete second
// (the slot in progress is left out).
func (r *ReleaseRate) PerSecond() float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.advance(r.now())
	var n int64
	for i := range r.counts {
		if int64(i) != r.slot%int64(len(r.counts)) {
			n += r.counts[i]
		}
	}
	return float64(n) / (rateSlots * rateSlot).Seconds()
}

// RetryAfter says when a client turned away now should come back: the time
// the ahead requests in front of it (waiting or queued) plus its own take to
// be released at the measured rate, rounded up to whole seconds, between
// MinRetryAfter and MaxRetryAfter. With nothing freed in the last second
// there is no rate to go by, and the answer is MinRetryAfter.
func (r *ReleaseRate) RetryAfter(ahead int) time.Duration {
	rate := r.PerSecond()
	if rate <= 0 {
		return MinRetryAfter
	}
	s := math.Ceil(float64(ahead+1) / rate)
	return min(max(time.Duration(s)*time.Second, MinRetryAfter), MaxRetryAfter)
}
