package main

import (
	"bytes"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/orderlab/orderlab/internal/otlptest"
	"github.com/orderlab/orderlab/internal/poll"
	"github.com/orderlab/orderlab/services/internal/apptest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, apptest.ProxyLeaks) }

func TestAPI(t *testing.T) { apptest.APISuite(t, service, map[string]string{"ENQUEUE_WAIT": "10s"}) }

// The database fails under load: killed backends, network faults, a
// restart (docs/reference/database-failures.md).
func TestDatabaseFaults(t *testing.T) { apptest.FaultSuite(t, service, nil) }

func TestShutdownKeepsAcknowledgedOrders(t *testing.T) {
	apptest.ShutdownKeepsAcknowledged(t, service, map[string]string{"ENQUEUE_WAIT": "5s"})
}

// N concurrent orders are all committed, in fewer transactions than orders.
func TestConcurrentOrdersAreBatched(t *testing.T) {
	inst := apptest.Start(t, service, map[string]string{
		"DB_MAX_CONNS": "2", "BATCH_MAX": "64", "BATCH_WAIT": "5ms",
	})
	const n = 200
	var wg sync.WaitGroup
	ids := make(chan int64, n)
	for i := range n {
		wg.Go(func() {
			// db_delay keeps the two workers busy, so orders queue and batch.
			r, err := inst.PostOrder("/orders?db_delay=20ms", apptest.OrderBody(fmt.Sprintf("batch-%d", i), 1+i%3), fmt.Sprintf("batch-key-%d", i))
			if err != nil || r.Status != http.StatusCreated {
				t.Errorf("order %d: %v %d %s", i, err, r.Status, r.Body)
				return
			}
			var o struct{ ID int64 }
			r.JSON(t, &o)
			ids <- o.ID
		})
	}
	wg.Wait()
	close(ids)
	var all []int64
	for id := range ids {
		all = append(all, id)
	}
	if len(all) != n {
		t.Fatalf("%d of %d orders acknowledged", len(all), n)
	}
	if got := inst.CountRows("SELECT count(*) FROM orders WHERE id = ANY($1)", all); got != n {
		t.Errorf("%d of %d acknowledged orders in the table", got, n)
	}
	fams := inst.Metrics()
	batches := fams.Count("orderlab_pipeline_batch_size", nil)
	committed := fams.Value("orderlab_pipeline_batch_size", nil)
	if committed != n {
		t.Errorf("batch sizes sum to %v, want %d", committed, n)
	}
	if batches >= n {
		t.Errorf("%d transactions for %d orders: no batching", batches, n)
	}
	t.Logf("%d orders in %d transactions", n, batches)
}

// A full intake queue answers 429 at once, and every other request succeeds.
func TestFullQueueRejects(t *testing.T) {
	inst := apptest.Start(t, service, map[string]string{
		"DB_MAX_CONNS": "1", "BATCH_MAX": "1", "QUEUE_CAPACITY": "1", "ENQUEUE_WAIT": "0s",
	})
	const n = 16
	var wg sync.WaitGroup
	res := make([]apptest.Response, n)
	for i := range n {
		wg.Go(func() {
			r, err := inst.Do("GET", "/work/db?delay=300ms", "", nil, nil)
			if err != nil {
				t.Error(err)
			}
			res[i] = r
		})
	}
	wg.Wait()
	rejected := 0
	for _, r := range res {
		switch r.Status {
		case http.StatusOK:
		case http.StatusTooManyRequests:
			rejected++
			if r.Header.Get("Retry-After") == "" || !strings.Contains(string(r.Body), "queue is full") {
				t.Errorf("429 without Retry-After or queue detail: %v %s", r.Header, r.Body)
			}
		default:
			t.Errorf("status %d: %s", r.Status, r.Body)
		}
	}
	if rejected == 0 {
		t.Fatal("no request was rejected with a queue of 1 and one worker")
	}
	if v := inst.Metrics().Value("orderlab_pipeline_rejections_total", nil); v != float64(rejected) {
		t.Errorf("rejections_total = %v, want %d", v, rejected)
	}
}

// The intake slot is reserved before the body is read, and given back by a
// request that fails validation.
func TestAdmissionBeforeDecode(t *testing.T) {
	inst := apptest.Start(t, service, map[string]string{
		"DB_MAX_CONNS": "1", "BATCH_MAX": "1", "QUEUE_CAPACITY": "1", "ENQUEUE_WAIT": "0s",
	})
	apptest.AdmissionBeforeDecode(t, inst, func() func() {
		// The worker, the persist queue (BATCH_MAX), every price worker
		// (GOMAXPROCS: the service runs in this process) and the intake
		// slot, one at a time: each must be admitted and, but the last,
		// taken off the intake before the next comes. Each holder is an
		// order whose insert waits for the orders table, which the test
		// holds until the checks are done, however long they take.
		unlock := inst.HoldOrderWrites()
		n := 3 + runtime.GOMAXPROCS(0)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				if r, err := inst.PostOrder("/orders", apptest.OrderBody("holder", 1+i%3), ""); err != nil || r.Status != http.StatusCreated {
					t.Errorf("holder %d: %v %d %s", i, err, r.Status, r.Body)
				}
			})
			poll.Until(t, 10*time.Second, fmt.Sprintf("holder %d admitted and, but the last, off the intake", i), func() error {
				fams := inst.Metrics()
				admitted := fams.Count("orderlab_pipeline_enqueue_wait_seconds", map[string]string{"outcome": "enqueued"})
				queued := fams.Value("orderlab_pipeline_queue_length", map[string]string{"stage": "intake"})
				if admitted != uint64(i+1) || (queued != 0 && i != n-1) {
					return fmt.Errorf("%d admitted, %v in intake", admitted, queued)
				}
				return nil
			})
		}
		return func() {
			unlock()
			poll.Returns(t, 30*time.Second, "the holders answered once the orders table is free", wg.Wait)
		}
	})
	if v := inst.Metrics().Value("orderlab_pipeline_rejections_total", map[string]string{"reason": "intake_full"}); v != 4 {
		t.Errorf("rejections_total{reason=intake_full} = %v, want 4", v)
	}
}

// The queue wait is a span under the request; the batch that committed the
// order is a trace of its own, linked to the request's span.
func TestTraceQueueWaitAndLinkedBatch(t *testing.T) {
	spans, server := apptest.Traced(t, service, nil)
	apptest.ChildOf(t, spans, server, "pipeline.enqueue")
	linked := false
	for _, b := range otlptest.Named(spans, "pipeline.batch") {
		for _, l := range b.GetLinks() {
			if bytes.Equal(l.GetSpanId(), server.GetSpanId()) && bytes.Equal(l.GetTraceId(), server.GetTraceId()) {
				linked = true
				apptest.ChildOf(t, spans, b, "pool.acquire")
			}
		}
	}
	if !linked {
		t.Fatalf("no pipeline.batch span links to the request span")
	}
}

// The pipeline's audit stage is bounded, and its demand reaches the edge: an
// order is admitted only with an audit slot, so a slow audit answers 429 at
// once while pending audits stay at the stage's size (docs/scenarios: backpressure-voidthe fix).
// The audit writes are held until the test has looked (apptest.HoldAudits):
// the slowest audit there is, however long the burst takes.
func TestAuditStageIsBoundedAndPushesBack(t *testing.T) {
	release := make(chan struct{})
	inst := apptest.Start(t, apptest.HoldAudits(service, release), map[string]string{
		"AUDIT_DELAY": "1ms", "AUDIT_WORKERS": "1", "AUDIT_QUEUE": "1",
		"DB_MAX_CONNS": "1", "BATCH_MAX": "1", "QUEUE_CAPACITY": "1",
	})
	releaseAudits := sync.OnceFunc(func() { close(release) })
	defer releaseAudits() // before the service stops: its shutdown drains the audits
	const n = 40
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	for i := range n {
		wg.Go(func() {
			r, err := inst.PostOrder("/orders", apptest.OrderBody("audited", 1+i%3), "")
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			codes[r.Status]++
			mu.Unlock()
		})
	}
	// Admitted orders are not stuck behind the held audits: each is
	// answered at its commit. Had an answer waited for its audit, the burst
	// would not be answered until the audits are released.
	poll.Returns(t, 30*time.Second, "the burst answered while its audits are held", wg.Wait)
	fams := inst.Metrics()
	// An order is admitted only with an audit slot: one running, one queued.
	if p := fams.Value("orderlab_audit_pending", nil); p > 2 {
		t.Errorf("audit pending = %v, want at most 2 (bounded stage)", p)
	}
	if codes[http.StatusTooManyRequests] == 0 || codes[http.StatusCreated] == 0 || codes[http.StatusCreated]+codes[http.StatusTooManyRequests] != n {
		t.Errorf("statuses = %v, want 201s and 429s only", codes)
	}
	if v := fams.Value("orderlab_pipeline_queue_capacity", map[string]string{"stage": "audit"}); v != 2 {
		t.Errorf("audit queue capacity = %v, want 2 (AUDIT_QUEUE + AUDIT_WORKERS)", v)
	}
	if codes[http.StatusServiceUnavailable] != 0 {
		t.Errorf("%d admitted orders timed out behind the audit stage", codes[http.StatusServiceUnavailable])
	}
	// With every answer in, the audit of each admitted order is pending:
	// none can end while held. The service counts an audit as pending just
	// after the answer, hence the wait.
	inst.AwaitMetric("orderlab_audit_pending", nil, float64(codes[http.StatusCreated]))
	// Released, the held audits end, and the stage is empty again.
	releaseAudits()
	inst.AwaitMetric("orderlab_audit_pending", nil, 0)
}

// The knobs of the pool pitfalls (docs/scenarios: connection-leak, nested-acquire, tx-across-downstream).
func TestPoolPitfalls(t *testing.T) {
	apptest.PoolPitfalls(t, service, map[string]string{"ENQUEUE_WAIT": "5s"})
}

// The workers and the pool change live under keyed load, and nothing fails
// but with a 429 and Retry-After, and nothing is lost
// (docs/reference/knobs.md). WORKERS, unset, follows DB_MAX_CONNS: the pool
// shrinks under it without a word about the workers; set, it stays; ""
// puts it back to following.
func TestLiveKnobsUnderLoad(t *testing.T) {
	persist := map[string]string{"stage": "persist"}
	apptest.LiveKnobsUnderLoad(t, service, nil, []apptest.KnobChange{
		{Knobs: map[string]string{"DB_MAX_CONNS": "5"}, Metric: "orderlab_pipeline_workers", Match: persist, Want: 5},
		{Knobs: map[string]string{"WORKERS": "2"}, Metric: "orderlab_pipeline_workers", Match: persist, Want: 2},
		{Knobs: map[string]string{"DB_MAX_CONNS": "20"}, Metric: "orderlab_db_pool_max_connections", Want: 20},
		{Knobs: map[string]string{"WORKERS": ""}, Metric: "orderlab_pipeline_workers", Match: persist, Want: 20},
	})
}
