package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/orderlab/orderlab/internal/poll"
	"github.com/orderlab/orderlab/services/internal/app"
	"github.com/orderlab/orderlab/services/internal/apptest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, apptest.ProxyLeaks) }

func TestAPI(t *testing.T) { apptest.APISuite(t, service, map[string]string{"LIMIT_WAIT": "10s"}) }

// The database fails under load: killed backends, network faults, a
// restart (docs/reference/database-failures.md).
func TestDatabaseFaults(t *testing.T) {
	apptest.FaultSuite(t, service, map[string]string{"LIMIT_WAIT": "5s"})
}

func TestShutdownKeepsAcknowledgedOrders(t *testing.T) {
	apptest.ShutdownKeepsAcknowledged(t, service, map[string]string{"LIMIT_WAIT": "5s"})
}

// Saturated (one permit, held by an order whose insert waits for the
// orders table, which the test holds), the service answers 429 with
// Retry-After after its short LIMIT_WAIT, while the permit holder is still
// in its transaction: the overload never reaches the pool.
func TestSaturatedAnswers429Quickly(t *testing.T) {
	inst := apptest.Start(t, service, map[string]string{"LIMIT": "1", "LIMIT_WAIT": "50ms"})
	unlock := inst.HoldOrderWrites()

	holderDone := make(chan apptest.Response, 1)
	go func() {
		r, err := inst.PostOrder("/orders", apptest.OrderBody("holder", 1), "")
		if err != nil {
			t.Error(err)
		}
		holderDone <- r
	}()
	inst.AwaitMetric("orderlab_limiter_permits_in_use", nil, 1) // the holder has its permit

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
	// Every rejection comes back while the holder is held: had they waited
	// for its permit, they would wait for the test.
	poll.Returns(t, 30*time.Second, "the rejections answered while the holder holds the permit", wg.Wait)
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
	unlock()
	if r := poll.Recv(t, 30*time.Second, "the holder's answer once the orders table is free", holderDone); r.Status != http.StatusCreated {
		t.Errorf("holder = %d %s", r.Status, r.Body)
	}

	fams := inst.Metrics()
	if v := fams.Value("orderlab_limiter_rejections_total", map[string]string{"reason": "wait_timeout"}); v != n {
		t.Errorf("rejections_total = %v, want %d", v, n)
	}
	if c := fams.Count("orderlab_limiter_wait_seconds", map[string]string{"outcome": "rejected"}); c != n {
		t.Errorf("limiter waits with outcome=rejected = %d, want %d", c, n)
	}
	if v := fams.Value("orderlab_db_pool_canceled_acquires_total", nil); v != 0 {
		t.Errorf("canceled pool acquires = %v: overload reached the pool", v)
	}
	if n := inst.CountRows("SELECT count(*) FROM orders WHERE customer_id = 'rejected'"); n != 0 {
		t.Errorf("%d rejected orders were stored", n)
	}
}

// The permit is taken before the body is read, and given back by a request
// that fails validation. The permit's holder is an order whose insert waits
// for the orders table, which the test holds until the checks are done.
func TestAdmissionBeforeDecode(t *testing.T) {
	inst := apptest.Start(t, service, map[string]string{"LIMIT": "1", "LIMIT_WAIT": "0s"})
	apptest.AdmissionBeforeDecode(t, inst, func() func() {
		unlock := inst.HoldOrderWrites()
		held := make(chan struct{})
		go func() {
			defer close(held)
			if r, err := inst.PostOrder("/orders", apptest.OrderBody("holder", 1), ""); err != nil || r.Status != http.StatusCreated {
				t.Errorf("holder: %v %d %s", err, r.Status, r.Body)
			}
		}()
		inst.AwaitMetric("orderlab_limiter_permits_in_use", nil, 1)
		return func() {
			unlock()
			poll.Recv(t, 30*time.Second, "the holder answered once the orders table is free", held)
		}
	})
	fams := inst.Metrics()
	if v := fams.Value("orderlab_limiter_rejections_total", map[string]string{"reason": "at_limit"}); v != 4 {
		t.Errorf("rejections_total{reason=at_limit} = %v, want 4", v)
	}
	if v := fams.Value("orderlab_limiter_permits_in_use", nil); v != 0 {
		t.Errorf("permits in use at the end = %v: a permit leaked", v)
	}
}

// LIMIT=adaptive serves orders and exports its limit with the mode.
func TestAdaptiveLimit(t *testing.T) {
	inst := apptest.Start(t, service, map[string]string{"LIMIT": "adaptive", "LIMIT_MAX": "50"})
	for i := range 5 {
		r, err := inst.PostOrder("/orders", apptest.OrderBody("adaptive", 1+i), "")
		if err != nil || r.Status != http.StatusCreated {
			t.Fatalf("order %d: %v %d %s", i, err, r.Status, r.Body)
		}
	}
	fams := inst.Metrics()
	if v := fams.Value("orderlab_limiter_limit", map[string]string{"mode": "adaptive"}); v < 1 || v > 50 {
		t.Errorf("orderlab_limiter_limit{mode=adaptive} = %v, want 1..50", v)
	}
	if n := inst.CountRows("SELECT count(*) FROM orders WHERE customer_id = 'adaptive'"); n != 5 {
		t.Errorf("%d of 5 orders stored", n)
	}
}

// A bad LIMIT names the variable and what it accepts.
func TestBadLimitIsAConfigurationError(t *testing.T) {
	err := app.Run(context.Background(), service, func(k string) string {
		return map[string]string{"LIMIT": "adaptiv", "LIMIT_MIN": "9", "LIMIT_MAX": "3"}[k]
	}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), `LIMIT="adaptiv": want an integer from 1 to 100000, or adaptive`) {
		t.Errorf("Run with LIMIT=adaptiv = %v", err)
	}
}

// The wait for a permit and the wait for a connection are spans under the request.
func TestTraceWaitsUnderRequest(t *testing.T) {
	spans, server := apptest.Traced(t, service, nil)
	apptest.ChildOf(t, spans, server, "limiter.wait")
	apptest.ChildOf(t, spans, server, "pool.acquire")
}

// The knobs of the pool pitfalls (docs/scenarios: connection-leak, nested-acquire, tx-across-downstream).
func TestPoolPitfalls(t *testing.T) {
	apptest.PoolPitfalls(t, service, map[string]string{"LIMIT_WAIT": "5s"})
}

// The pool and the limit change live under keyed load, fixed to adaptive
// and back, newest waiter first from the limit of 2 on, and nothing fails
// but with a 429 and Retry-After, and nothing is lost
// (docs/reference/knobs.md).
func TestLiveKnobsUnderLoad(t *testing.T) {
	apptest.LiveKnobsUnderLoad(t, service, map[string]string{"LIMIT": "20"}, []apptest.KnobChange{
		{Knobs: map[string]string{"DB_MAX_CONNS": "5"}, Metric: "orderlab_db_pool_max_connections", Want: 5},
		{Knobs: map[string]string{"DB_MAX_CONNS": "20"}, Metric: "orderlab_db_pool_max_connections", Want: 20},
		{Knobs: map[string]string{"LIMIT": "2", "LIMIT_ORDER": "lifo"}, Metric: "orderlab_limiter_limit", Want: 2},
		{Knobs: map[string]string{"LIMIT": "adaptive", "LIMIT_MIN": "2", "LIMIT_MAX": "20"}, Metric: "orderlab_knob_value",
			Match: map[string]string{"knob": "LIMIT_MIN"}, Want: 2},
		{Knobs: map[string]string{"LIMIT": "20"}, Metric: "orderlab_limiter_limit", Want: 20},
	})
}
