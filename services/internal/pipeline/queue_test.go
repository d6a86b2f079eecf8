package pipeline

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/orderlab/orderlab/internal/poll"
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
	poll.Until(t, 10*time.Second, "one worker left after a shrink to 1", func() error {
		if c.running.Load() != 1 {
			return fmt.Errorf("%d workers after a shrink to 1", c.running.Load())
		}
		return nil
	})
	if q.len() == 0 {
		t.Log("the backlog drained before the shrink took effect")
	}
	c.resize(3, work)
	if c.running.Load() != 3 {
		t.Errorf("%d workers after a grow to 3", c.running.Load())
	}
	poll.Until(t, 10*time.Second, "every item taken", func() error {
		if taken.Load() != items {
			return fmt.Errorf("%d of %d items taken", taken.Load(), items)
		}
		return nil
	})
	q.close()
	c.wg.Wait()
	for i := range items {
		if seen[i] != 1 {
			t.Fatalf("item %d taken %d times", i, seen[i])
		}
	}
}
