package pipeline

import (
	"sync"
	"sync/atomic"
)

// fifo is a stage's input queue (intake, audit). It has no bound of its
// own: the stage's gate (Pipeline.slots, Pipeline.auditSlots) is the
// bound, reserved before a push, so a push never blocks, and a gate whose
// size changes live (Resize) needs no new queue. Nothing queued is ever
// dropped.
type fifo[T any] struct {
	mu     sync.Mutex
	cond   sync.Cond
	items  []T
	closed bool
}

func newFIFO[T any]() *fifo[T] {
	q := &fifo[T]{}
	q.cond.L = &q.mu
	return q
}

func (q *fifo[T]) push(v T) {
	q.mu.Lock()
	q.items = append(q.items, v)
	q.mu.Unlock()
	q.cond.Signal()
}

// pop takes the oldest item, waiting for one. It returns false when the
// queue is closed and empty, or when it is empty and leave (if not nil)
// says the caller is one worker too many (crew.leave): a queued item is
// always taken first.
func (q *fifo[T]) pop(leave func() bool) (T, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		if len(q.items) > 0 {
			v := q.items[0]
			var zero T
			q.items[0] = zero
			q.items = q.items[1:]
			return v, true
		}
		if q.closed || (leave != nil && leave()) {
			var zero T
			return zero, false
		}
		q.cond.Wait()
	}
}

// close lets the workers drain the queue and stop.
func (q *fifo[T]) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.cond.Broadcast()
}

// wake has every waiting worker look again whether it is one too many.
func (q *fifo[T]) wake() { q.cond.Broadcast() }

func (q *fifo[T]) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}

// crew is a stage's set of worker goroutines, whose number changes live
// (WORKERS, AUDIT_WORKERS). A smaller number asks the extra workers to
// leave, and each leaves between items: a persist worker finishes its
// batch first.
type crew struct {
	target, running atomic.Int64
	wg              sync.WaitGroup
	// shrunk is closed, and replaced, when the target falls, to wake the
	// workers that wait for an item; wake does the same for a fifo.
	shrunk atomic.Pointer[chan struct{}]
	wake   func()
}

func newCrew(wake func()) *crew {
	c := &crew{wake: wake}
	ch := make(chan struct{})
	c.shrunk.Store(&ch)
	return c
}

// resize sets the number of workers, starting work on new goroutines when
// it grows. Resizes are serialised by the caller (the Pipeline's mu), and
// at least one worker runs, so wg never hits zero under an Add.
func (c *crew) resize(n int, work func()) {
	old := c.target.Swap(int64(n))
	for c.running.Load() < int64(n) {
		c.running.Add(1)
		c.wg.Go(work)
	}
	if int64(n) < old {
		ch := make(chan struct{})
		close(*c.shrunk.Swap(&ch))
		if c.wake != nil {
			c.wake()
		}
	}
}

// leave says whether the calling worker is one too many, and if so counts
// it out: it must return.
func (c *crew) leave() bool {
	for {
		r := c.running.Load()
		if r <= c.target.Load() {
			return false
		}
		if c.running.CompareAndSwap(r, r-1) {
			return true
		}
	}
}

// woken is closed when the target next falls.
func (c *crew) woken() <-chan struct{} { return *c.shrunk.Load() }
