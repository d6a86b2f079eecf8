package pipeline

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A crew shrinks while its queue has a backlog, grows again, and every
// item queued is taken exactly once.
func TestCrewResizesOverABacklog(t *testing.T) {
	q := newFIFO[int]()
	c := newCrew(q.wake)
	var mu sync.Mutex
	seen := map[int]int{}
	var taken atomic.Int64
	work := func() {
		for {
			v, ok := q.pop(c.leave)
			if !ok {
				return
			}
			time.Sleep(100 * time.Microsecond)
			mu.Lock()
			seen[v]++
			mu.Unlock()
			taken.Add(1)
		}
	}
	c.resize(4, work)
	const items = 2000
	for i := range items {
		q.push(i)
	}
	c.resize(1, work)
	for deadline := time.Now().Add(10 * time.Second); c.running.Load() != 1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d workers 10s after a shrink to 1", c.running.Load())
		}
	}
	if q.len() == 0 {
		t.Log("the backlog drained before the shrink took effect")
	}
	c.resize(3, work)
	if c.running.Load() != 3 {
		t.Errorf("%d workers after a grow to 3", c.running.Load())
	}
	for deadline := time.Now().Add(10 * time.Second); taken.Load() != items; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d items taken after 10s", taken.Load(), items)
		}
	}
	q.close()
	c.wg.Wait()
	for i := range items {
		if seen[i] != 1 {
			t.Fatalf("item %d taken %d times", i, seen[i])
		}
	}
}
