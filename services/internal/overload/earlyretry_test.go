package overload

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

func TestClientIsEarlyUntilItsRetryAfterIsUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := WithClient(context.Background())
		c := ClientOf(ctx)
		if c == nil || ClientOf(WithClient(ctx)) == c {
			t.Fatal("WithClient gave no Client of its own")
		}
		if _, early := c.Early(time.Now()); early {
			t.Error("a client never told to wait is early")
		}
		told := time.Now()
		c.Told(told, 2*time.Second)
		time.Sleep(time.Second)
		until, early := c.Early(time.Now())
		if !early || !until.Equal(told.Add(2*time.Second)) {
			t.Errorf("1 s into a 2 s Retry-After: early %v until %v, want true until %v", early, until, told.Add(2*time.Second))
		}
		time.Sleep(time.Second) // honoured to the nanosecond
		if _, early := c.Early(time.Now()); early {
			t.Error("a client that waited its whole Retry-After is early")
		}
		var none *Client // a server that keeps no Client per connection
		none.Told(time.Now(), time.Minute)
		if _, early := none.Early(time.Now()); early || ClientOf(context.Background()) != nil {
			t.Error("a request without a Client is early")
		}
	})
}

func TestHoldUntilEndsAtItsTimeOrWithItsRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		HoldUntil(context.Background(), start.Add(1500*time.Millisecond))
		if d := time.Since(start); d != 1500*time.Millisecond {
			t.Errorf("held %s, want 1.5s", d)
		}
		start = time.Now()
		HoldUntil(context.Background(), start.Add(-time.Second)) // passed already
		if d := time.Since(start); d != 0 {
			t.Errorf("a time already passed held %s", d)
		}
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(300*time.Millisecond, cancel) // the client hangs up
		start = time.Now()
		HoldUntil(ctx, start.Add(time.Minute))
		if d := time.Since(start); d != 300*time.Millisecond {
			t.Errorf("a hold whose client hung up after 300ms ended after %s", d)
		}
	})
}
