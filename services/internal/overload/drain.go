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

// Drain measures how fast a resource frees up (permits given back, queue
// slots emptied) over the last second, so that a rejection can say when
// the client should come back: RetryAfter. Done is called once per freed
// unit, on the hot path: it costs a clock read and an uncontended lock.
type Drain struct {
	mu     sync.Mutex
	slot   int64                 // the current slot: monotonic time / drainSlot
	counts [drainSlots + 1]int64 // completions per slot, a ring
	start  time.Time
	now    func() time.Time // time.Now; a test's clock in tests
}

const (
	drainSlot  = 250 * time.Millisecond
	drainSlots = 4 // the window: drainSlots complete slots = 1 s
)

// NewDrain returns an empty Drain.
func NewDrain() *Drain { return &Drain{start: time.Now(), now: time.Now} }

// Done counts one freed unit.
func (d *Drain) Done() {
	d.mu.Lock()
	d.advance(d.now())
	d.counts[d.slot%int64(len(d.counts))]++
	d.mu.Unlock()
}

// advance moves the ring to now's slot, zeroing the slots it skips.
func (d *Drain) advance(now time.Time) {
	s := int64(now.Sub(d.start) / drainSlot)
	for i := d.slot + 1; i <= s && i <= d.slot+int64(len(d.counts)); i++ {
		d.counts[i%int64(len(d.counts))] = 0
	}
	if s > d.slot {
		d.slot = s
	}
}

// Rate is the units freed per second over the last complete second (the
// slot in progress is left out).
func (d *Drain) Rate() float64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.advance(d.now())
	var n int64
	for i := range d.counts {
		if int64(i) != d.slot%int64(len(d.counts)) {
			n += d.counts[i]
		}
	}
	return float64(n) / (drainSlots * drainSlot).Seconds()
}

// RetryAfter says when a client turned away now should come back: the time
// the ahead requests in front of it (waiting or queued) plus its own take to
// drain at the measured rate, rounded up to whole seconds, between
// MinRetryAfter and MaxRetryAfter. With nothing freed in the last second
// there is no rate to go by, and the answer is MinRetryAfter.
func (d *Drain) RetryAfter(ahead int) time.Duration {
	rate := d.Rate()
	if rate <= 0 {
		return MinRetryAfter
	}
	s := math.Ceil(float64(ahead+1) / rate)
	return min(max(time.Duration(s)*time.Second, MinRetryAfter), MaxRetryAfter)
}
