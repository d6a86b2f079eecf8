package main

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/orderlab/orderlab/services/internal/apptest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestAPI(t *testing.T) { apptest.APISuite(t, service) }

func TestShutdownKeepsAcknowledgedOrders(t *testing.T) {
	apptest.ShutdownKeepsAcknowledged(t, service, nil)
}

// With more concurrent requests than connections, the goroutines queue in
// pgxpool.Acquire: every request succeeds, but the acquire-wait metric rises.
func TestPoolWaitRisesUnderConcurrency(t *testing.T) {
	inst := apptest.Start(t, service, map[string]string{"DB_MAX_CONNS": "2"})
	before := inst.Metrics()

	const n = 10 // five rounds of two 100ms holds
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			r, err := inst.Do("GET", "/work/db?delay=100ms", "", nil, nil)
			if err != nil || r.Status != http.StatusOK {
				t.Errorf("GET /work/db = %v %d %s", err, r.Status, r.Body)
			}
		})
	}
	wg.Wait()

	after := inst.Metrics()
	waited := apptest.Value(after, "orderlab_db_pool_acquire_wait_seconds", nil) -
		apptest.Value(before, "orderlab_db_pool_acquire_wait_seconds", nil)
	// Eight of the ten had to wait for at least one 100ms round: at least
	// 8 x 100ms of waiting in all (a lower bound, not a timing threshold).
	if waited < 0.8 {
		t.Errorf("acquire wait rose by %.3fs, want >= 0.8s", waited)
	}
	empty := apptest.Value(after, "orderlab_db_pool_empty_acquires_total", nil) -
		apptest.Value(before, "orderlab_db_pool_empty_acquires_total", nil)
	if empty < 8 {
		t.Errorf("empty acquires rose by %v, want >= 8", empty)
	}
}

// When a request's deadline passes while it waits for the pool, it gets a
// 503 that says the pool was exhausted and how long it waited.
func TestPoolExhaustedGives503(t *testing.T) {
	inst := apptest.Start(t, service, map[string]string{"DB_MAX_CONNS": "1", "REQUEST_TIMEOUT": "300ms"})

	// Six requests each holding the only connection for 200ms cannot all
	// finish within 300ms: the later ones time out in the pool's queue.
	const n = 6
	var wg sync.WaitGroup
	results := make([]apptest.Response, n)
	for i := range n {
		wg.Go(func() {
			r, err := inst.Do("GET", "/work/db?delay=200ms", "", nil, nil)
			if err != nil {
				t.Error(err)
			}
			results[i] = r
		})
	}
	wg.Wait()

	exhausted := 0
	for _, r := range results {
		switch r.Status {
		case http.StatusOK:
		case http.StatusServiceUnavailable:
			var p struct {
				Type          string   `json:"type"`
				WaitedSeconds *float64 `json:"waited_seconds"`
			}
			r.JSON(t, &p)
			// A request that got the connection late may instead time out
			// inside pg_sleep: that is a timeout, not a starved pool.
			if strings.HasSuffix(p.Type, "#problem-pool-exhausted") && p.WaitedSeconds != nil {
				exhausted++
				if *p.WaitedSeconds < 0.25 {
					t.Errorf("pool-exhausted answer says it waited %.3fs, less than its deadline", *p.WaitedSeconds)
				}
			}
		default:
			t.Errorf("status %d: %s", r.Status, r.Body)
		}
	}
	if exhausted == 0 {
		t.Fatalf("no request got a pool-exhausted 503; statuses: %v", statuses(results))
	}
	fams := inst.Metrics()
	if c := apptest.Value(fams, "orderlab_db_pool_canceled_acquires_total", nil); c < float64(exhausted) {
		t.Errorf("canceled acquires = %v, want >= %d", c, exhausted)
	}
	if c := apptest.Count(fams, "orderlab_db_pool_acquire_wait_seconds", map[string]string{"outcome": "canceled"}); c < uint64(exhausted) {
		t.Errorf("acquire waits with outcome=canceled = %d, want >= %d", c, exhausted)
	}
	if c := apptest.Count(fams, "orderlab_http_request_duration_seconds", map[string]string{"route": "/work/db", "code": "503"}); c < uint64(exhausted) {
		t.Errorf("503s in the request histogram = %d, want >= %d", c, exhausted)
	}
}

func statuses(rs []apptest.Response) []int {
	s := make([]int, len(rs))
	for i, r := range rs {
		s[i] = r.Status
	}
	return s
}

// The wait for a pooled connection is a span of its own under the request.
func TestTracePoolWaitUnderRequest(t *testing.T) {
	spans, server := apptest.Traced(t, service, nil)
	acquire := apptest.ChildOf(t, spans, server, "pool.acquire")
	if acquire.GetEndTimeUnixNano() < acquire.GetStartTimeUnixNano() {
		t.Errorf("pool.acquire span has no duration")
	}
}
