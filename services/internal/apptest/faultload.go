package apptest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// orderLoad sends orders at a fixed rate (open loop: one goroutine per
// order, whatever the answers' latency) until stopped, and keeps every
// answer. Each order has a customer_id of its own, so that its row (or
// rows) can be found whatever the answer said; three in four carry an
// Idempotency-Key.
type orderLoad struct {
	inst   *Instance
	name   string
	path   string
	client *http.Client

	mu      sync.Mutex
	answers []answer
	stop    chan struct{}
	ticking sync.WaitGroup
	sending sync.WaitGroup
}

// answer is one order's fate.
type answer struct {
	Customer, Key string
	Sent          time.Time
	Status        int
	Type          string // the problem type's name (database-unavailable), if any
	ID            int64  // the stored order's id, on a success
	Err           error  // a transport error
}

func (a answer) success() bool { return a.Status == http.StatusCreated || a.Status == http.StatusOK }

func (a answer) String() string {
	if a.Err != nil {
		return fmt.Sprintf("%s: %v", a.Customer, a.Err)
	}
	return fmt.Sprintf("%s: %d %s", a.Customer, a.Status, a.Type)
}

// startLoad sends rate orders a second to path (/orders?...) on inst.
func startLoad(inst *Instance, name, path string, rate int) *orderLoad {
	l := &orderLoad{
		inst: inst, name: name, path: path, stop: make(chan struct{}),
		client: &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 64}},
	}
	l.ticking.Go(func() {
		tick := time.NewTicker(time.Second / time.Duration(rate))
		defer tick.Stop()
		for seq := 0; ; seq++ {
			select {
			case <-l.stop:
				return
			case <-tick.C:
			}
			l.sending.Go(func() { l.send(seq) })
		}
	})
	return l
}

func (l *orderLoad) send(seq int) {
	a := answer{Customer: fmt.Sprintf("%s-%d", l.name, seq), Sent: time.Now()}
	if seq%4 != 3 {
		a.Key = a.Customer
	}
	req, err := http.NewRequest(http.MethodPost, l.inst.URL+l.path, strings.NewReader(OrderBody(a.Customer, 1+seq%3)))
	if err != nil {
		panic(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if a.Key != "" {
		req.Header.Set("Idempotency-Key", a.Key)
	}
	resp, err := l.client.Do(req)
	if err == nil {
		var body []byte
		body, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		a.Status = resp.StatusCode
		var v struct {
			ID   int64  `json:"id"`
			Type string `json:"type"`
		}
		_ = json.Unmarshal(body, &v)
		a.ID = v.ID
		if _, name, ok := strings.Cut(v.Type, "#problem-"); ok {
			a.Type = name
		}
	}
	a.Err = err
	l.mu.Lock()
	l.answers = append(l.answers, a)
	l.mu.Unlock()
}

// finish stops sending, waits for every answer and returns them.
func (l *orderLoad) finish() []answer {
	close(l.stop)
	l.ticking.Wait()
	l.sending.Wait()
	l.client.CloseIdleConnections()
	return l.answers
}

// tally counts answers by status and problem type: "201", "503 outcome-unknown".
func tally(as []answer) map[string]int {
	m := map[string]int{}
	for _, a := range as {
		k := fmt.Sprint(a.Status)
		switch {
		case a.Err != nil:
			k = "transport error"
		case a.Type != "":
			k += " " + a.Type
		}
		m[k]++
	}
	return m
}

// checkAnswers fails t for any answer allowed rejects, and for what no
// fault may cause: a 500, a transport error, a 503 without a known type.
func checkAnswers(t *testing.T, as []answer, allowed func(answer) bool) {
	t.Helper()
	bad := 0
	for _, a := range as {
		if a.success() || allowed(a) {
			continue
		}
		if bad++; bad <= 5 {
			t.Errorf("answer not allowed under this fault: %s", a)
		}
	}
	if bad > 5 {
		t.Errorf("... %d answers not allowed in all", bad)
	}
	t.Logf("%d answers: %v", len(as), tally(as))
}

// checkStored holds the service to its answers, against the table: every
// acknowledged order is there (a keyed one under its key, with the id
// answered), an order answered "not stored" is not, and no order is there
// twice.
func checkStored(t *testing.T, inst *Instance, as []answer) {
	t.Helper()
	ctx := context.Background()
	rows, err := inst.DB.Query(ctx, "SELECT customer_id, id, coalesce(idempotency_key, '') FROM orders")
	if err != nil {
		t.Fatal(err)
	}
	type stored struct {
		id  int64
		key string
	}
	byCustomer := map[string][]stored{}
	for rows.Next() {
		var c string
		var s stored
		if err := rows.Scan(&c, &s.id, &s.key); err != nil {
			t.Fatal(err)
		}
		byCustomer[c] = append(byCustomer[c], s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for _, a := range as {
		got := byCustomer[a.Customer]
		switch {
		case len(got) > 1:
			t.Errorf("%s is stored %d times (answered %d %s)", a.Customer, len(got), a.Status, a.Type)
		case a.success() && (len(got) == 0 || got[0].id != a.ID || got[0].key != a.Key):
			t.Errorf("%s was acknowledged with id %d but the table has %+v", a.Customer, a.ID, got)
		case notStored(a) && len(got) != 0:
			t.Errorf("%s was answered %d %s (nothing stored) but is in the table as %+v", a.Customer, a.Status, a.Type, got)
		}
	}
}

// notStored says whether an answer claims that nothing was stored.
func notStored(a answer) bool {
	switch {
	case a.Status == http.StatusTooManyRequests, a.Status == http.StatusConflict:
		return true
	case a.Status == http.StatusServiceUnavailable:
		return a.Type == "database-unavailable" || a.Type == "pool-exhausted"
	}
	return false
}

// checkRecovered checks that the service is whole again after a fault: no
// dead connection left in its pool (every pooled connection is a live
// session on the server), every connection usable (useEveryConnection,
// without a database error), and its goroutines back to their baseline.
func checkRecovered(t *testing.T, inst *Instance, baseline float64, maxConns int, appName string) {
	t.Helper()
	if r := inst.MustDo(http.MethodGet, "/readyz", "", nil, nil); r.Status != http.StatusOK {
		t.Fatalf("/readyz after the fault = %d %s", r.Status, r.Body)
	}
	settle(t, "the pool keeps connections the server no longer has", func() (bool, string) {
		pooled := Value(inst.Metrics(), "orderlab_db_pool_total_connections", nil)
		// The sessions of this service on its database: the pool's and
		// the readiness check's own.
		live := inst.CountRows(`SELECT count(*) FROM pg_stat_activity
			WHERE application_name = $1 AND datname = current_database()`, appName)
		return float64(live) == pooled+1, fmt.Sprintf("%v pooled connections, %d sessions on the server (want pooled + 1)", pooled, live)
	})
	errorsBefore := Value(inst.Metrics(), "orderlab_db_errors_total", nil)
	useEveryConnection(t, inst, maxConns)
	if after := Value(inst.Metrics(), "orderlab_db_errors_total", nil); after != errorsBefore {
		t.Errorf("database errors rose from %v to %v while every connection was used after the fault", errorsBefore, after)
	}
	settle(t, "goroutines not back to their baseline", func() (bool, string) {
		g := Value(inst.Metrics(), "go_goroutines", nil)
		return g <= baseline+5, fmt.Sprintf("%v goroutines, baseline %v", g, baseline)
	})
}

// useEveryConnection sends n requests at once that each hold a pooled
// connection for 50 ms (n = DB_MAX_CONNS): every one must succeed.
func useEveryConnection(t *testing.T, inst *Instance, n int) {
	t.Helper()
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if r, err := inst.Do(http.MethodGet, "/work/db?delay=50ms", "", nil, nil); err != nil || r.Status != http.StatusOK {
				t.Errorf("GET /work/db = %v %d %s", err, r.Status, bytes.TrimSpace(r.Body))
			}
		})
	}
	wg.Wait()
}

// settle polls ok for up to 20 s and fails t with what with its last
// message if it never holds.
func settle(t *testing.T, what string, ok func() (bool, string)) {
	t.Helper()
	var last string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		var done bool
		if done, last = ok(); done {
			return
		}
	}
	t.Errorf("%s: %s", what, last)
}
