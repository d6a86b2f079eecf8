package main

import (
	"net/http"
	"runtime"
	"runtime/debug"
	rtmetrics "runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/orderlab/orderlab/internal/poll"
	"github.com/orderlab/orderlab/services/internal/apptest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, apptest.ProxyLeaks) }

func TestAPI(t *testing.T) { apptest.APISuite(t, service, nil) }

// The database fails under load: killed backends, network faults, a
// restart (docs/reference/database-failures.md).
func TestDatabaseFaults(t *testing.T) { apptest.FaultSuite(t, service, nil) }

func TestShutdownKeepsAcknowledgedOrders(t *testing.T) {
	apptest.ShutdownKeepsAcknowledged(t, service, nil)
}

// With more concurrent requests than connections, the goroutines queue in
// pgxpool.Acquire: every request succeeds, but the acquire-wait metric rises.
// Each order sleeps 100ms (db_delay), then its insert waits for the orders
// table, which the test holds until the eight beyond the two connections
// are seen queued: the queue is there for as long as the test looks.
func TestPoolWaitRisesUnderConcurrency(t *testing.T) {
	inst := apptest.Start(t, service, map[string]string{"DB_MAX_CONNS": "2"})
	before := inst.Metrics()
	unlock := inst.HoldOrderWrites()

	const n = 10 // five rounds of two holds of 100ms at least
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			r, err := inst.PostOrder("/orders?db_delay=100ms", apptest.OrderBody("pool-wait", 1+i%3), "")
			if err != nil || r.Status != http.StatusCreated {
				t.Errorf("POST /orders = %v %d %s", err, r.Status, r.Body)
			}
		})
	}
	// Watch the queue in front of the pool while the connections are held.
	inst.AwaitMetric("orderlab_db_pool_acquires_in_progress", nil, n-2)
	unlock()
	poll.Returns(t, 30*time.Second, "every order answered once the orders table is free", wg.Wait)
	if v := inst.Metrics().Value("orderlab_db_pool_acquires_in_progress", nil); v != 0 {
		t.Errorf("acquires in progress after the load = %v, want 0", v)
	}

	after := inst.Metrics()
	waited := after.Value("orderlab_db_pool_acquire_wait_seconds", nil) -
		before.Value("orderlab_db_pool_acquire_wait_seconds", nil)
	// Eight of the ten had to wait for at least one 100ms round: at least
	// 8 x 100ms of waiting in all (a lower bound, not a timing threshold).
	if waited < 0.8 {
		t.Errorf("acquire wait rose by %.3fs, want >= 0.8s", waited)
	}
	empty := after.Value("orderlab_db_pool_empty_acquires_total", nil) -
		before.Value("orderlab_db_pool_empty_acquires_total", nil)
	if empty < 8 {
		t.Errorf("empty acquires rose by %v, want >= 8", empty)
	}
}

// When a request's deadline passes while it waits for the pool, it gets a
// 503 that says the pool was exhausted and how long it waited. The only
// connection is held by an order whose insert waits for the orders table,
// which the test holds; it began under the 30s REQUEST_TIMEOUT, the five
// that follow under 300ms (lowered live), which passes in the pool's queue.
func TestPoolExhaustedGives503(t *testing.T) {
	const token = "pool-exhausted"
	inst := apptest.Start(t, service, map[string]string{"DB_MAX_CONNS": "1", "REQUEST_TIMEOUT": "30s", "ADMIN_TOKEN": token})
	unlock := inst.HoldOrderWrites()
	holder := make(chan apptest.Response, 1)
	go func() {
		r, err := inst.PostOrder("/orders", apptest.OrderBody("holder", 1), "")
		if err != nil {
			t.Error(err)
		}
		holder <- r
	}()
	inst.AwaitHeldOrderWrites(1) // the holder has the connection
	if r := inst.PatchKnobs(token, map[string]string{"REQUEST_TIMEOUT": "300ms"}); r.Status != http.StatusOK {
		t.Fatalf("PATCH REQUEST_TIMEOUT=300ms = %d %s", r.Status, r.Body)
	}

	const n = 5
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
	poll.Returns(t, 30*time.Second, "the requests behind the held connection answered", wg.Wait)
	unlock()
	if r := poll.Recv(t, 30*time.Second, "the holder's answer once the orders table is free", holder); r.Status != http.StatusCreated {
		t.Errorf("holder = %d %s, want 201", r.Status, r.Body)
	}

	exhausted := 0
	for _, r := range results {
		var p struct {
			Type          string   `json:"type"`
			WaitedSeconds *float64 `json:"waited_seconds"`
		}
		if r.Status == http.StatusServiceUnavailable {
			r.JSON(t, &p)
		}
		if r.Status != http.StatusServiceUnavailable || !strings.HasSuffix(p.Type, "#problem-pool-exhausted") || p.WaitedSeconds == nil {
			t.Errorf("status %d %s, want a pool-exhausted 503 saying how long it waited", r.Status, r.Body)
			continue
		}
		exhausted++
		if *p.WaitedSeconds < 0.25 {
			t.Errorf("pool-exhausted answer says it waited %.3fs, less than its deadline", *p.WaitedSeconds)
		}
	}
	if exhausted == 0 {
		t.Fatalf("no request got a pool-exhausted 503; statuses: %v", statuses(results))
	}
	fams := inst.Metrics()
	if c := fams.Value("orderlab_db_pool_canceled_acquires_total", nil); c < float64(exhausted) {
		t.Errorf("canceled acquires = %v, want >= %d", c, exhausted)
	}
	if c := fams.Count("orderlab_db_pool_acquire_wait_seconds", map[string]string{"outcome": "canceled"}); c < uint64(exhausted) {
		t.Errorf("acquire waits with outcome=canceled = %d, want >= %d", c, exhausted)
	}
	if c := fams.Count("orderlab_http_request_duration_seconds", map[string]string{"route": "/work/db", "code": "503"}); c < uint64(exhausted) {
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

// With AUDIT_DELAY every order starts a goroutine of its own for its audit
// write: nothing bounds them (docs/scenarios: backpressure-void). Shutdown still waits for them.
// The audit writes are held until the test has counted them
// (apptest.HoldAudits), however long the 40 orders take.
func TestAuditGoroutinePerOrder(t *testing.T) {
	release := make(chan struct{})
	inst := apptest.Start(t, apptest.HoldAudits(service, release), map[string]string{"AUDIT_DELAY": "1ms", "DB_MAX_CONNS": "4"})
	releaseAudits := sync.OnceFunc(func() { close(release) })
	defer releaseAudits() // before the service stops: its shutdown waits for the audits
	base := inst.Metrics().Value("go_goroutines", nil)
	const n = 40
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if r, err := inst.PostOrder("/orders", apptest.OrderBody("audited", 1+i%3), ""); err != nil || r.Status != http.StatusCreated {
				t.Errorf("POST = %v %d", err, r.Status)
			}
		})
	}
	poll.Returns(t, 30*time.Second, "the orders answered while their audits are held", wg.Wait)
	fams := inst.Metrics()
	if p := fams.Value("orderlab_audit_pending", nil); p != n {
		t.Errorf("audit pending = %v, want %d: one goroutine per order", p, n)
	}
	if g := fams.Value("go_goroutines", nil); g < base+n {
		t.Errorf("goroutines = %v, want at least %v + %d", g, base, n)
	}
	releaseAudits()
	inst.AwaitMetric("orderlab_audit_pending", nil, 0)
}

// With API_WAIT_MODE=syscall, /work/api blocks OS threads (nanosleep on
// Linux) instead of parking goroutines (docs/scenarios: os-thread-pinning).
// The service runs in this process, so its runtime says how many threads
// the waits hold: goroutines outside Go, each in a system call with its
// thread, where the kernel holds them. go_threads counts threads created,
// which a second run reuses, so it is only logged. Where the wait is a
// locked thread on a Go timer (not Linux, macOS or the BSDs), the held
// threads show as threads only (api's TestBlockingSleepHoldsAThread).
func TestSyscallWaitPinsThreads(t *testing.T) {
	inKernel := runtime.GOOS == "linux" || runtime.GOOS == "darwin" || runtime.GOOS == "freebsd" ||
		runtime.GOOS == "netbsd" || runtime.GOOS == "openbsd"
	held := func(mode string) (outside, goThreads float64) {
		inst := apptest.Start(t, service, map[string]string{"API_WAIT_MODE": mode})
		const n = 40
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				if r, err := inst.Do("GET", "/work/api?delay=3s", "", nil, nil); err != nil || r.Status != 200 {
					t.Errorf("GET /work/api = %v %d", err, r.Status)
				}
			})
		}
		// Sample while the requests wait, once all of them do: the peaks.
		// The 3 s waits leave the sampling (half a second, begun once the
		// 40 are in) a wide margin on a busy machine.
		inst.AwaitMetric("orderlab_http_requests_in_flight", nil, n)
		samples := []rtmetrics.Sample{{Name: "/sched/goroutines/not-in-go:goroutines"}}
		for range 10 {
			time.Sleep(50 * time.Millisecond)
			rtmetrics.Read(samples)
			outside = max(outside, float64(samples[0].Value.Uint64()))
			goThreads = max(goThreads, inst.Metrics().Value("go_threads", nil))
		}
		poll.Returns(t, 30*time.Second, "the "+mode+" waits answered", wg.Wait)
		return outside, goThreads
	}
	parked, parkedThreads := held("timer")
	pinned, pinnedThreads := held("syscall")
	t.Logf("goroutines outside Go at the peak: timer %v, syscall %v; go_threads: timer %v, syscall %v",
		parked, pinned, parkedThreads, pinnedThreads)
	if inKernel && pinned < parked+30 {
		t.Errorf("%v goroutines outside Go with syscall waits, %v with timer waits; want the 40 syscall waits to hold ~40 threads in the kernel", pinned, parked)
	}
	if !inKernel && pinnedThreads < 40 {
		t.Errorf("go_threads %v with 40 syscall waits, want at least 40", pinnedThreads)
	}
}

// REQUEST_BUFFER_BYTES gives each request a buffer; REQUEST_BUFFER_POOL
// takes it from a sync.Pool, so that requests one after another reuse one.
//
// A sync.Pool may drop what it holds: at every garbage collection, and, under
// the race detector, a quarter of the buffers put back. So the collector is
// off while the test counts, and there are enough requests that the drops
// cannot add up to half: with 100 requests about 25 are expected, and 50 or
// more has a chance below one in a million.
func TestRequestBufferKnob(t *testing.T) {
	const size, requests = 512 << 10, 100
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	allocated := func(pooled string) float64 {
		inst := apptest.Start(t, service, map[string]string{"REQUEST_BUFFER_BYTES": "524288", "REQUEST_BUFFER_POOL": pooled})
		before := inst.Metrics().Value("go_memstats_alloc_bytes_total", nil)
		for range requests {
			if r := inst.MustDo("GET", "/work/api?delay=1ms", "", nil, nil); r.Status != 200 {
				t.Fatalf("pooled=%s: status %d", pooled, r.Status)
			}
		}
		return inst.Metrics().Value("go_memstats_alloc_bytes_total", nil) - before
	}
	// Every request allocates its own buffer...
	unpooled := allocated("false")
	if unpooled < requests*size {
		t.Errorf("%d requests with a %d-byte buffer each allocated %.0f bytes, want at least %d", requests, size, unpooled, requests*size)
	}
	// ...unless the buffers come from the pool: one request at a time reuses
	// the one buffer, but for the ones the race detector drops.
	if pooled := allocated("true"); pooled > unpooled/2 {
		t.Errorf("%d requests with a pooled %d-byte buffer allocated %.0f bytes, want at most half of the %.0f unpooled", requests, size, pooled, unpooled)
	}
}

// FuzzPlaceOrder: POST /orders end to end against real Postgres (make fuzz).
func FuzzPlaceOrder(f *testing.F) { apptest.FuzzPlaceOrder(f, service) }

// The knobs of the pool pitfalls (docs/scenarios: connection-leak, nested-acquire, tx-across-downstream).
func TestPoolPitfalls(t *testing.T) { apptest.PoolPitfalls(t, service, nil) }

// Clients that break the rules (docs/reference/http-servers.md, Limits): each
// server answers them and goes on serving the others.
func TestAbuse(t *testing.T) { apptest.Abuse(t, service, nil) }

// The pool resizes live under keyed load, and nothing fails or is lost
// (docs/reference/knobs.md).
func TestLiveKnobsUnderLoad(t *testing.T) {
	apptest.LiveKnobsUnderLoad(t, service, nil, []apptest.KnobChange{
		{Knobs: map[string]string{"DB_MAX_CONNS": "5"}, Metric: "orderlab_db_pool_max_connections", Want: 5},
		{Knobs: map[string]string{"DB_MAX_CONNS": "20"}, Metric: "orderlab_db_pool_max_connections", Want: 20},
	})
}
