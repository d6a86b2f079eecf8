package background

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/goleak"

	"github.com/orderlab/orderlab/internal/metrictest"
	"github.com/orderlab/orderlab/internal/poll"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeService answers like one of the services: POST /orders stores an
// order (201, id 42; 503 for the first refuse orders), GET /orders/42,
// /work/db and /work/api 200, /work/cpu 429. It counts what it answered by
// route, and once it has answered limit requests (0: no limit) it holds
// every further one unanswered until the test ends, so that a test can stop
// the load with nothing left in flight.
type fakeService struct {
	*httptest.Server
	mu      sync.Mutex
	byRoute map[string]int
	agents  map[string]int
	keys    map[string]bool
	refuse  int
	limit   int
	held    chan struct{}
}

func newFakeService(t *testing.T, refuse, limit int) *fakeService {
	t.Helper()
	s := &fakeService{byRoute: map[string]int{}, agents: map[string]int{}, keys: map[string]bool{},
		refuse: refuse, limit: limit, held: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		route := r.URL.Path
		if strings.HasPrefix(route, "/orders/") {
			route = "/orders/:id"
		}
		s.mu.Lock()
		if s.limit > 0 && s.answered() >= s.limit {
			s.mu.Unlock()
			<-s.held
			return
		}
		defer s.mu.Unlock()
		s.agents[r.UserAgent()]++
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/orders":
			if s.refuse > 0 {
				s.refuse--
				http.Error(w, "starting", http.StatusServiceUnavailable)
				return
			}
			if !bytes.Contains(body, []byte(`"customer_id"`)) || r.Header.Get("Content-Type") != "application/json" {
				http.Error(w, "bad order", http.StatusBadRequest)
				route = "bad order"
				break
			}
			if k := r.Header.Get("Idempotency-Key"); k != "" {
				if s.keys[k] {
					http.Error(w, "key reused", http.StatusUnprocessableEntity)
					route = "key reused"
					break
				}
				s.keys[k] = true
			}
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte(`{"id":42,"customer_id":"c-1"}`))
		case r.Method == http.MethodGet && r.URL.Path == "/orders/42",
			r.Method == http.MethodGet && (r.URL.Path == "/work/db" || r.URL.Path == "/work/api"):
			_, _ = w.Write([]byte(`{}`))
		case r.Method == http.MethodGet && r.URL.Path == "/work/cpu":
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
		default:
			http.NotFound(w, r)
			route = "not found: " + r.Method + " " + r.URL.Path
		}
		s.byRoute[route]++
	}))
	t.Cleanup(s.Close)
	t.Cleanup(func() { close(s.held) }) // runs first: Close waits for the held requests
	return s
}

// answered is the number of requests answered but the refused orders.
// Call it with s.mu held.
func (s *fakeService) answered() int {
	n := 0
	for _, v := range s.byRoute {
		n += v
	}
	return n
}

func (s *fakeService) seen() (map[string]int, map[string]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.byRoute), maps.Clone(s.agents)
}

// runUntil runs cfg until ready returns nil (internal/poll, for at most a
// minute: what says what it waits for), then stops it and waits for Run.
func runUntil(t *testing.T, cfg Config, what string, ready func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	poll.Until(t, time.Minute, what, ready)
}

// runUntilHeld runs cfg until the service has answered its limit of
// requests and the load has counted every answer (total returns the count
// so far; nil: do not wait for it).
func runUntilHeld(t *testing.T, cfg Config, s *fakeService, total func() int) {
	t.Helper()
	what := fmt.Sprintf("the service to answer its %d requests", s.limit)
	if total != nil {
		what += ", each counted"
	}
	runUntil(t, cfg, what, func() error {
		s.mu.Lock()
		n := s.answered()
		s.mu.Unlock()
		// The order created at the start is not counted.
		if n < s.limit || (total != nil && total() != n-1) {
			routes, _ := s.seen()
			return fmt.Errorf("%d answered: %v", n, routes)
		}
		return nil
	})
}

func TestCycleGivesEachEndpointItsWeightSpreadOut(t *testing.T) {
	order := cycle(Mix)
	count := make([]int, len(Mix))
	for i, e := range order {
		count[e]++
		if i > 0 && order[i-1] == e {
			t.Errorf("cycle %v: %s twice in a row", order, Mix[e].Route)
		}
	}
	for i, e := range Mix {
		if count[i] != e.Weight {
			t.Errorf("%s appears %d times in the cycle %v, want its weight %d", e.Route, count[i], order, e.Weight)
		}
	}
}

// TestRunSendsTheMixAndCountsIt: the service gets the mix in its weights,
// every request marked with the background's User-Agent, orders with
// their own Idempotency-Key, reads of the order created at the start; and
// the counts on /metrics agree with what the service answered.
func TestRunSendsTheMixAndCountsIt(t *testing.T) {
	s := newFakeService(t, 0, 161)
	reg := prometheus.NewRegistry()
	cfg := Config{Targets: []Target{{Name: "svc", URL: s.URL}}, Rate: 400, Conns: 4, Metrics: reg}
	runUntilHeld(t, cfg, s, func() int { return int(total(t, reg)) })

	routes, agents := s.seen()
	routes["/orders"]-- // the order created at the start
	for _, e := range Mix {
		// 160 requests are 20 turns of the cycle; the ones still in flight
		// when the service stopped answering (at most Conns) took their
		// turn without being answered.
		want := 160 * e.Weight / 8
		if got := routes[e.Route]; got < want-cfg.Conns || got > want+cfg.Conns {
			t.Errorf("%s: %d of 160 requests, want %d±%d (weight %d of 8)", e.Route, got, want, cfg.Conns, e.Weight)
		}
	}
	if len(agents) != 1 || agents[UserAgent] == 0 {
		t.Errorf("User-Agents %v, want only %q", agents, UserAgent)
	}

	// Every answer is counted under its route and outcome: 200s ok, the
	// 429s of /work/cpu rejected.
	for _, e := range Mix {
		outcome := outcomeOK
		if e.Route == "/work/cpu" {
			outcome = outcomeRejected
		}
		if got, served := counted(t, reg, "svc", e.Route, outcome), routes[e.Route]; got != float64(served) {
			t.Errorf("%s %s: counted %v, the service answered %d", e.Route, outcome, got, served)
		}
	}
}

// TestEachWindowIsSummarised: a line per target and window, one after the
// other. The service answers everything and the test waits for the lines
// rather than for a count of answers: on a busy machine the load falls
// behind its schedule, the windows overlap, and a window is summarised only
// once all of its requests are answered. Windows of half a second, not
// less: each is an open run of its own with its connections, and at 50 ms
// a machine at a load average of 30 under -race started them faster than
// it finished them (no summary in a minute, three runs of three).
func TestEachWindowIsSummarised(t *testing.T) {
	s := newFakeService(t, 0, 0)
	log := &syncWriter{w: &bytes.Buffer{}}
	lines := func() []string {
		log.mu.Lock()
		defer log.mu.Unlock()
		var out []string
		for _, l := range strings.Split(log.w.(*bytes.Buffer).String(), "\n") {
			if strings.HasPrefix(l, "background: svc: ") {
				out = append(out, l)
			}
		}
		return out
	}
	cfg := Config{Targets: []Target{{Name: "svc", URL: s.URL}}, Rate: 40, Window: 500 * time.Millisecond, Log: log}
	runUntil(t, cfg, "three window summaries of 500 ms windows", func() error {
		if got := lines(); len(got) < 3 {
			return fmt.Errorf("%d summaries: %q", len(got), got)
		}
		return nil
	})
	got := lines()
	for _, l := range got[:3] {
		if !strings.Contains(l, " requests in ") || !strings.Contains(l, " ok, ") || !strings.Contains(l, "p99 of successes") {
			t.Errorf("window summary %q: want requests, outcomes and the p99 of successes", l)
		}
		if strings.HasPrefix(l, "background: svc: 0 requests") {
			t.Errorf("window summary %q: a window of 500 ms at 40/s sent nothing", l)
		}
	}
}

// total is the sum of orderlab_background_requests_total in reg.
func total(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	return metrictest.Gather(t, reg).Value("orderlab_background_requests_total", nil)
}

// counted reads orderlab_background_requests_total{job, route, outcome}
// from reg.
func counted(t *testing.T, reg *prometheus.Registry, job, route, outcome string) float64 {
	t.Helper()
	match := map[string]string{"job": job, "route": route, "outcome": outcome}
	fams := metrictest.Gather(t, reg)
	if !fams.Has("orderlab_background_requests_total", match) {
		t.Fatalf("no orderlab_background_requests_total%v", match)
	}
	return fams.Value("orderlab_background_requests_total", match)
}

// TestEveryOutcomeIsExportedFromTheStart: the counts exist, at 0, before
// any request, so that the board's rates are 0 rather than missing.
func TestEveryOutcomeIsExportedFromTheStart(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := newMetrics(reg)
	m.target("svc", Mix)
	if n := testutil.CollectAndCount(reg, "orderlab_background_requests_total"); n != len(Mix)*3 {
		t.Errorf("%d series, want %d (every route and outcome)", n, len(Mix)*3)
	}
}

// TestRunWaitsForAServiceThatIsNotReady: the order the reads need is
// retried until the service takes it, and the wait is said once.
func TestRunWaitsForAServiceThatIsNotReady(t *testing.T) {
	s := newFakeService(t, 2, 11)
	var log bytes.Buffer
	cfg := Config{Targets: []Target{{Name: "svc", URL: s.URL}}, Rate: 200, Log: &syncWriter{w: &log}}
	runUntilHeld(t, cfg, s, nil)
	if n := strings.Count(log.String(), "waiting for the service"); n != 1 {
		t.Errorf("the wait was said %d times, want once:\n%s", n, log.String())
	}
}

func TestConfigErrors(t *testing.T) {
	ok := Config{Targets: []Target{{Name: "svc", URL: "http://127.0.0.1:1"}}, Rate: 1}
	for name, c := range map[string]Config{
		"no targets":    {Rate: 1},
		"rate 0":        {Targets: ok.Targets},
		"unnamed":       {Targets: []Target{{URL: "http://127.0.0.1:1"}}, Rate: 1},
		"remote":        {Targets: []Target{{Name: "svc", URL: "http://unbounded:8080"}}, Rate: 1},
		"weightless":    {Targets: ok.Targets, Rate: 1, Mix: []Endpoint{{Route: "/x", Method: "GET", Path: "/x"}}},
		"method DELETE": {Targets: ok.Targets, Rate: 1, Mix: []Endpoint{{Route: "/x", Method: "DELETE", Path: "/x", Weight: 1}}},
	} {
		if err := Run(context.Background(), c); err == nil {
			t.Errorf("%s: Run accepted %+v", name, c)
		}
	}
	remote := Config{Targets: []Target{{Name: "svc", URL: "http://unbounded:8080"}}, Rate: 1, AllowRemote: true}
	if _, err := remote.withDefaults(); err != nil {
		t.Errorf("a compose service name with AllowRemote: %v", err)
	}
}

// TestRatesChangeWhileItRuns: a target set to 0 gets nothing more, and
// raised again it is loaded again, within the window (a minute) that the
// change does not wait for; a bad change is refused whole.
func TestRatesChangeWhileItRuns(t *testing.T) {
	s := newFakeService(t, 0, 0)
	reg := prometheus.NewRegistry()
	rates := NewRates(200, "svc")
	cfg := Config{Targets: []Target{{Name: "svc", URL: s.URL}}, Rates: rates, Metrics: reg}
	sent := func() float64 { return total(t, reg) }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	poll.Until(t, 10*time.Second, "requests at 200/s", func() error {
		if n := sent(); n < 20 {
			return fmt.Errorf("%v sent", n)
		}
		return nil
	})
	if err := rates.Set(map[string]float64{"svc": 0}); err != nil {
		t.Fatal(err)
	}
	// The requests in flight end; then none is sent.
	var stopped float64
	poll.Until(t, 10*time.Second, "no more requests at rate 0", func() error {
		before := sent()
		time.Sleep(300 * time.Millisecond)
		if after := sent(); after != before {
			return fmt.Errorf("%v sent in 300 ms at rate 0", after-before)
		}
		stopped = sent()
		return nil
	})
	for _, bad := range []map[string]float64{{"svc": -1}, {"svc": 20000}, {"other": 1}, {"svc": 5, "other": 1}} {
		if err := rates.Set(bad); err == nil {
			t.Errorf("Set(%v) was accepted", bad)
		}
	}
	if got := rates.All()["svc"]; got != 0 {
		t.Errorf("rate after refused changes: %v, want 0", got)
	}
	if err := rates.Set(map[string]float64{"svc": 200}); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 10*time.Second, "requests again at 200/s", func() error {
		if n := sent() - stopped; n < 20 {
			return fmt.Errorf("%v sent since", n)
		}
		return nil
	})
}
