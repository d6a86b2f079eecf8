package scenario

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/orderlab/orderlab/internal/faultproxy"
	"github.com/orderlab/orderlab/lab/dbproxy"
)

// recordingProxy is the lab's dbproxy control API in front of a real
// faultproxy (to a listener that accepts and holds), recording every fault set.
func recordingProxy(t *testing.T) (*LabProxy, func() []dbproxy.Fault) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	p, err := faultproxy.New(ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	var mu sync.Mutex
	var set []dbproxy.Fault
	h := dbproxy.NewServer(p)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if r.Method == http.MethodPut && rec.Code == http.StatusOK {
			var f dbproxy.Fault
			_ = json.Unmarshal(rec.Body.Bytes(), &f)
			mu.Lock()
			set = append(set, f)
			mu.Unlock()
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	}))
	t.Cleanup(srv.Close)
	return &LabProxy{Control: &dbproxy.Client{URL: srv.URL}, Host: "dbproxy"}, func() []dbproxy.Fault {
		mu.Lock()
		defer mu.Unlock()
		return append([]dbproxy.Fault(nil), set...)
	}
}

func latencyScenario(t *testing.T) Scenario {
	return labScenario(t, func(s *Scenario) {
		for i, d := range []string{"0s", "20ms", "0s"} {
			var v Duration
			if err := v.UnmarshalText([]byte(d)); err != nil {
				t.Fatal(err)
			}
			s.Phases[i].DBLatency = &v
		}
	})
}

func TestLabRunStagesDBLatencyThroughTheLabsProxyAndClearsIt(t *testing.T) {
	// as the services show it in GET /knobs
	f := newLabFixture(t, "host=dbproxy port=5432 database=orderlab user=orderlab password=xxxxx tls=off")
	proxy, faults := recordingProxy(t)
	f.runner.DBProxy = proxy
	if _, _, err := f.runner.Run(context.Background(), latencyScenario(t)); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, x := range faults() {
		got = append(got, x.Fault+x.Latency)
	}
	// the check, then per target: phase 1 none, phase 2 20ms, phase 3 none; then the clear
	want := "none none none latency20ms latency20ms none none none"
	if strings.Join(got, " ") != want {
		t.Errorf("faults set = %q, want %q", strings.Join(got, " "), want)
	}
	f.checkRestored(t)
}

func TestLabRunRefusesDBLatencyWhenTheServicesBypassTheProxy(t *testing.T) {
	f := newLabFixture(t, "host=postgres port=5432 database=orderlab user=orderlab password=xxxxx tls=off")
	proxy, _ := recordingProxy(t)
	f.runner.DBProxy = proxy
	_, _, err := f.runner.Run(context.Background(), latencyScenario(t))
	if err == nil || !strings.Contains(err.Error(), "not through the database proxy dbproxy") {
		t.Errorf("Run = %v, want a refusal: the services do not go through the proxy", err)
	}
	f.runner.DBProxy = nil
	if _, _, err := f.runner.Run(context.Background(), latencyScenario(t)); err == nil || !strings.Contains(err.Error(), "needs the lab's database proxy") {
		t.Errorf("Run without a proxy = %v, want a refusal", err)
	}
}

func TestReachesReadsBothFormsOfTheDatabaseAddress(t *testing.T) {
	// host:port (a proxy on the same host as Postgres): the port decides.
	for dsn, want := range map[string]bool{
		"host=127.0.0.1 port=6001 database=orderlab user=orderlab tls=off":   true,
		"host=127.0.0.1 port=5432 database=orderlab user=orderlab tls=off":   false,
		"postgres://orderlab:xxxxx@127.0.0.1:6001/orderlab?sslmode=disable":  true,
		"postgres://orderlab:xxxxx@127.0.0.1:5432/orderlab?sslmode=disable":  false,
		"postgres://orderlab:xxxxx@127.0.0.1:60011/orderlab?sslmode=disable": false,
	} {
		if got := reaches(dsn, "127.0.0.1:6001"); got != want {
			t.Errorf("reaches(%q, 127.0.0.1:6001) = %v, want %v", dsn, got, want)
		}
	}
	for dsn, want := range map[string]bool{
		"host=dbproxy port=5432 database=orderlab user=orderlab tls=off":         true,
		"postgres://orderlab:xxxxx@dbproxy:5432/orderlab?sslmode=disable":        true,
		"host=postgres port=5432 database=orderlab user=dbproxy tls=off":         false,
		"postgres://orderlab:xxxxx@postgres:5432/dbproxy?sslmode=disable":        false,
		"host=dbproxy.example port=5432 database=orderlab user=orderlab tls=off": false,
	} {
		if got := reaches(dsn, "dbproxy"); got != want {
			t.Errorf("reaches(%q, dbproxy) = %v, want %v", dsn, got, want)
		}
	}
}
