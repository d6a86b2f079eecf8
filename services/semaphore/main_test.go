package main

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/orderlab/orderlab/services/internal/apptest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestAPI(t *testing.T) { apptest.APISuite(t, service, map[string]string{"LIMIT_WAIT": "10s"}) }

func TestShutdownKeepsAcknowledgedOrders(t *testing.T) {
	apptest.ShutdownKeepsAcknowledged(t, service, map[string]string{"LIMIT_WAIT": "5s"})
}

// Saturated (one permit, a long db_delay), the service answers 429 with
// Retry-After after its short LIMIT_WAIT, while the permit holder is still
// in its transaction: the overload never reaches the pool.
func TestSaturatedAnswers429Quickly(t *testing.T) {
	inst := apptest.Start(t, service, map[string]string{"LIMIT": "1", "LIMIT_WAIT": "50ms"})

	holderDone := make(chan apptest.Response, 1)
	go func() {
		r, err := inst.PostOrder("/orders?db_delay=3s", apptest.OrderBody("holder", 1), "")
		if err != nil {
			t.Error(err)
		}
		holderDone <- r
	}()
	// Wait until the holder has its permit.
	for deadline := time.Now().Add(5 * time.Second); ; {
		if apptest.Value(inst.Metrics(), "orderlab_limiter_permits_in_use", nil) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the holder never took the permit")
		}
		time.Sleep(10 * time.Millisecond)
	}

	const n = 5
	var wg sync.WaitGroup
	rejected := make([]apptest.Response, n)
	for i := range n {
		wg.Go(func() {
			r, err := inst.PostOrder("/orders", apptest.OrderBody("rejected", 1), "")
			if err != nil {
				t.Error(err)
			}
			rejected[i] = r
		})
	}
	wg.Wait()
	// Every rejection came back while the 3s holder was still running.
	select {
	case r := <-holderDone:
		t.Fatalf("the holder finished (%d) before the rejections were all answered", r.Status)
	default:
	}
	for _, r := range rejected {
		if r.Status != http.StatusTooManyRequests {
			t.Errorf("status = %d %s, want 429", r.Status, r.Body)
			continue
		}
		if r.Header.Get("Retry-After") != "1" {
			t.Errorf("Retry-After = %q, want 1", r.Header.Get("Retry-After"))
		}
		if !strings.Contains(string(r.Body), "#problem-overloaded") {
			t.Errorf("body = %s", r.Body)
		}
	}
	if r := <-holderDone; r.Status != http.StatusCreated {
		t.Errorf("holder = %d %s", r.Status, r.Body)
	}

	fams := inst.Metrics()
	if v := apptest.Value(fams, "orderlab_limiter_rejections_total", nil); v != n {
		t.Errorf("rejections_total = %v, want %d", v, n)
	}
	if c := apptest.Count(fams, "orderlab_limiter_wait_seconds", map[string]string{"outcome": "rejected"}); c != n {
		t.Errorf("limiter waits with outcome=rejected = %d, want %d", c, n)
	}
	if v := apptest.Value(fams, "orderlab_db_pool_canceled_acquires_total", nil); v != 0 {
		t.Errorf("canceled pool acquires = %v: overload reached the pool", v)
	}
	if n := inst.CountRows("SELECT count(*) FROM orders WHERE customer_id = 'rejected'"); n != 0 {
		t.Errorf("%d rejected orders were stored", n)
	}
}

// The wait for a permit and the wait for a connection are spans under the request.
func TestTraceWaitsUnderRequest(t *testing.T) {
	spans, server := apptest.Traced(t, service, nil)
	apptest.ChildOf(t, spans, server, "limiter.wait")
	apptest.ChildOf(t, spans, server, "pool.acquire")
}
