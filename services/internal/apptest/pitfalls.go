package apptest

import (
	"fmt"
	"maps"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orderlab/orderlab/internal/poll"
	"github.com/orderlab/orderlab/services/internal/app"
)

// PoolPitfalls checks the knobs of the pool pitfalls
// (docs/scenarios/connection-leak.md, nested-acquire.md,
// tx-across-downstream.md) on a model: LEAK_EVERY leaks connections until
// the pool is dry; /work/db?conns=N holds N connections at once and deadlocks when the
// pool cannot give one request all of them; POST /orders?api_delay with
// api_call=inside holds the connection for the downstream call, with
// api_call=before it does not. env sets the model's knobs so that it does
// not shed this light load.
func PoolPitfalls(t *testing.T, svc app.Service, env map[string]string) {
	with := func(more map[string]string) map[string]string {
		e := maps.Clone(env)
		if e == nil {
			e = map[string]string{}
		}
		maps.Copy(e, more)
		return e
	}
	t.Run("ConnectionLeak", func(t *testing.T) {
		connectionLeak(t, Start(t, svc, with(map[string]string{"DB_MAX_CONNS": "2", "LEAK_EVERY": "2", "REQUEST_TIMEOUT": "500ms"})))
	})
	inst := Start(t, svc, with(map[string]string{"DB_MAX_CONNS": "3", "REQUEST_TIMEOUT": "1s"}))
	t.Run("NestedAcquire", func(t *testing.T) { nestedAcquire(t, inst) })
	t.Run("TxAcrossDownstream", func(t *testing.T) { txAcrossDownstream(t, inst) })
}

// connectionLeak: with LEAK_EVERY=2 and a pool of 2, four requests succeed
// and leave both connections acquired for good; the fifth waits until its
// deadline, and the longest hold keeps growing.
func connectionLeak(t *testing.T, inst *Instance) {
	for i := range 4 {
		if r := inst.MustDo("GET", "/work/db?delay=1ms", "", nil, nil); r.Status != http.StatusOK {
			t.Fatalf("request %d: %d %s; a leak does not fail the request that leaks", i, r.Status, r.Body)
		}
	}
	fams := inst.Metrics()
	if v := fams.Value("orderlab_db_pool_acquired_connections", nil); v != 2 {
		t.Errorf("acquired connections after 4 requests with LEAK_EVERY=2 = %v, want 2 (the pool's max)", v)
	}
	first := fams.Value("orderlab_db_pool_longest_hold_seconds", nil)
	start := time.Now()
	r := inst.MustDo("GET", "/work/db?delay=1ms", "", nil, nil)
	if r.Status != http.StatusServiceUnavailable || time.Since(start) < 450*time.Millisecond {
		t.Errorf("request on a leaked-dry pool = %d after %s, want 503 at its 500ms deadline: %s", r.Status, time.Since(start), r.Body)
	}
	if later := inst.Metrics().Value("orderlab_db_pool_longest_hold_seconds", nil); later < first+0.4 {
		t.Errorf("longest hold went from %.3fs to %.3fs over %s: want it to grow with the wall clock", first, later, time.Since(start))
	}
}

// nestedAcquire, pool 3: conns=2 succeeds alone and under two clients
// (pool >= threads x (conns - 1) + 1 = 3); conns=4 can never have all its
// connections, and waits while holding three until its deadline.
func nestedAcquire(t *testing.T, inst *Instance) {
	if r := inst.MustDo("GET", "/work/db?delay=1ms&conns=5", "", nil, nil); r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), `"conns"`) {
		t.Errorf("conns=5 = %d %s, want 400 naming conns", r.Status, r.Body)
	}
	before := inst.Metrics().Value("orderlab_db_pool_acquires_total", nil)
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for range 3 {
				if r := inst.MustDo("GET", "/work/db?delay=20ms&conns=2", "", nil, nil); r.Status != http.StatusOK {
					t.Errorf("conns=2 with two clients and a pool of 3 = %d %s", r.Status, r.Body)
				}
			}
		})
	}
	wg.Wait()
	if got := inst.Metrics().Value("orderlab_db_pool_acquires_total", nil) - before; got != 12 {
		t.Errorf("six requests with conns=2 made %v acquires, want 12", got)
	}

	done := make(chan Response, 1)
	go func() { done <- inst.MustDo("GET", "/work/db?delay=1ms&conns=4", "", nil, nil) }()
	// Three held, the fourth awaited: by itself, and only while conns=4
	// runs (until its deadline), so the wait ends when its answer comes.
	var r Response
	answered := false
	poll.Until(t, 10*time.Second, "conns=4 on a pool of 3 holding 3 connections and awaiting a fourth", func() error {
		fams := inst.Metrics()
		held, waiting := fams.Value("orderlab_db_pool_acquired_connections", nil), fams.Value("orderlab_db_pool_acquires_in_progress", nil)
		if held == 3 && waiting == 1 {
			return nil
		}
		select {
		case r = <-done:
			answered = true
			t.Fatalf("conns=4 answered %d before 3 connections were seen held and one acquire waiting (last seen: %v held, %v waiting)", r.Status, held, waiting)
		default:
		}
		return fmt.Errorf("%v held, %v waiting", held, waiting)
	})
	if !answered {
		r = poll.Recv(t, 30*time.Second, "the conns=4 answer at its deadline", done)
	}
	if r.Status != http.StatusServiceUnavailable {
		t.Errorf("conns=4 on a pool of 3 = %d %s, want 503 at the deadline", r.Status, r.Body)
	}
	if r := inst.MustDo("GET", "/work/db?delay=1ms&conns=3", "", nil, nil); r.Status != http.StatusOK {
		t.Errorf("conns=3 after the deadlock ended = %d %s: the connections were not given back", r.Status, r.Body)
	}
}

// txAcrossDownstream: api_call=inside holds the order's connection for the
// downstream call too, api_call=before does not; both answers take it.
func txAcrossDownstream(t *testing.T, inst *Instance) {
	hold := func(where string) (held, took time.Duration) {
		before := inst.Metrics().Value("orderlab_db_pool_connection_hold_seconds", nil)
		start := time.Now()
		r, err := inst.PostOrder("/orders?api_delay=200ms&api_call="+where, OrderBody("downstream-"+where, 1), "")
		took = time.Since(start)
		if err != nil || r.Status != http.StatusCreated {
			t.Fatalf("api_call=%s: %v %d %s", where, err, r.Status, r.Body)
		}
		after := inst.Metrics().Value("orderlab_db_pool_connection_hold_seconds", nil)
		return time.Duration((after - before) * float64(time.Second)), took
	}
	inside, insideTook := hold("inside")
	before, beforeTook := hold("before")
	if inside < 200*time.Millisecond {
		t.Errorf("api_call=inside held connections %s in all, want at least the 200ms downstream call", inside)
	}
	if before >= 150*time.Millisecond {
		t.Errorf("api_call=before held connections %s in all, want the transaction alone", before)
	}
	if insideTook < 200*time.Millisecond || beforeTook < 200*time.Millisecond {
		t.Errorf("answers took %s (inside) and %s (before): both must wait for the downstream call", insideTook, beforeTook)
	}
	if r, err := inst.PostOrder("/orders?api_delay=1ms&api_call=after", OrderBody("downstream-bad", 1), ""); err != nil || r.Status != http.StatusBadRequest {
		t.Errorf("api_call=after = %v %d, want 400", err, r.Status)
	}
	if n := inst.CountRows("SELECT count(*) FROM orders WHERE customer_id LIKE 'downstream-%'"); n != 2 {
		t.Errorf("%d orders stored, want 2", n)
	}
}
