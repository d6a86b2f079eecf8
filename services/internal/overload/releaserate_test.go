package overload

import (
	"testing"
	"time"
)

// fakeClock is a ReleaseRate's clock that the test moves.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time         { return c.t }
func (c *fakeClock) add(d time.Duration)    { c.t = c.t.Add(d) }
func newTestRate(c *fakeClock) *ReleaseRate { return &ReleaseRate{start: c.t, now: c.now} }
func release(r *ReleaseRate, n int) {
	for range n {
		r.Released()
	}
}

func TestReleaseRateCoversTheLastCompleteSecond(t *testing.T) {
	c := &fakeClock{t: time.Unix(1000, 0)}
	r := newTestRate(c)
	if r := r.PerSecond(); r != 0 {
		t.Fatalf("empty release rate = %v", r)
	}
	for range 4 { // 100 a slot for one second
		release(r, 100)
		c.add(rateSlot)
	}
	release(r, 1000) // the slot in progress is not counted yet
	if r := r.PerSecond(); r != 400 {
		t.Errorf("rate = %v, want 400/s", r)
	}
	c.add(rateSlot) // the 1000 now count; the oldest 100 fall out
	if r := r.PerSecond(); r != 1300 {
		t.Errorf("rate = %v, want 1300/s", r)
	}
	c.add(10 * time.Second) // quiet: everything falls out
	if r := r.PerSecond(); r != 0 {
		t.Errorf("rate after a quiet 10 s = %v, want 0", r)
	}
}

func TestRetryAfterIsTheTimeToReleaseTheQueue(t *testing.T) {
	c := &fakeClock{t: time.Unix(1000, 0)}
	r := newTestRate(c)
	if ra := r.RetryAfter(5000); ra != MinRetryAfter {
		t.Errorf("RetryAfter with no rate = %s, want %s", ra, MinRetryAfter)
	}
	for range 4 {
		release(r, 100) // 400/s
		c.add(rateSlot)
	}
	for _, tc := range []struct {
		ahead int
		want  time.Duration
	}{
		{0, time.Second},           // 1/400 s rounds up to the minimum
		{399, time.Second},         // 400 to drain at 400/s
		{400, 2 * time.Second},     // 401: just over a second
		{1999, 5 * time.Second},    // 2,000 clients in front of a pool that turns over 400/s
		{1_000_000, MaxRetryAfter}, // capped
	} {
		if got := r.RetryAfter(tc.ahead); got != tc.want {
			t.Errorf("RetryAfter(%d) = %s, want %s", tc.ahead, got, tc.want)
		}
	}
}
