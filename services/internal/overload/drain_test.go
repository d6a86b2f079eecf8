package overload

import (
	"testing"
	"time"
)

// fakeClock is a Drain's clock that the test moves.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time      { return c.t }
func (c *fakeClock) add(d time.Duration) { c.t = c.t.Add(d) }
func newTestDrain(c *fakeClock) *Drain   { return &Drain{start: c.t, now: c.now} }
func done(d *Drain, n int) {
	for range n {
		d.Done()
	}
}

func TestDrainRateCoversTheLastCompleteSecond(t *testing.T) {
	c := &fakeClock{t: time.Unix(1000, 0)}
	d := newTestDrain(c)
	if r := d.Rate(); r != 0 {
		t.Fatalf("empty drain rate = %v", r)
	}
	for range 4 { // 100 a slot for one second
		done(d, 100)
		c.add(drainSlot)
	}
	done(d, 1000) // the slot in progress is not counted yet
	if r := d.Rate(); r != 400 {
		t.Errorf("rate = %v, want 400/s", r)
	}
	c.add(drainSlot) // the 1000 now count; the oldest 100 fall out
	if r := d.Rate(); r != 1300 {
		t.Errorf("rate = %v, want 1300/s", r)
	}
	c.add(10 * time.Second) // quiet: everything falls out
	if r := d.Rate(); r != 0 {
		t.Errorf("rate after a quiet 10 s = %v, want 0", r)
	}
}

func TestRetryAfterIsTheQueuesDrainTime(t *testing.T) {
	c := &fakeClock{t: time.Unix(1000, 0)}
	d := newTestDrain(c)
	if ra := d.RetryAfter(5000); ra != MinRetryAfter {
		t.Errorf("RetryAfter with no rate = %s, want %s", ra, MinRetryAfter)
	}
	for range 4 {
		done(d, 100) // 400/s
		c.add(drainSlot)
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
		if got := d.RetryAfter(tc.ahead); got != tc.want {
			t.Errorf("RetryAfter(%d) = %s, want %s", tc.ahead, got, tc.want)
		}
	}
}
