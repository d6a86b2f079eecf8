package runner

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
	"github.com/orderlab/orderlab/lab/scenario"
	"github.com/orderlab/orderlab/lab/scenario/setup"
)

// recordingProxy is the lab's dbproxy control API in front of a real
// faultproxy (to a listener that accepts and holds), recording every fault set.
func recordingProxy(t *testing.T) (*setup.LabProxy, func() []dbproxy.Fault) {
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
	return &setup.LabProxy{Control: &dbproxy.Client{URL: srv.URL}, Host: "dbproxy"}, func() []dbproxy.Fault {
		mu.Lock()
		defer mu.Unlock()
		return append([]dbproxy.Fault(nil), set...)
	}
}

func latencyScenario(t *testing.T) scenario.Scenario {
	return labScenario(t, func(s *scenario.Scenario) {
		for i, d := range []string{"0s", "20ms", "0s"} {
			var v scenario.Duration
			if err := v.UnmarshalText([]byte(d)); err != nil {
				t.Fatal(err)
			}
			s.Phases[i].DBLatency = &v
		}
	})
}

func TestLabRunSetsDBLatencyThroughTheLabsProxyAndClearsIt(t *testing.T) {
	// as the services show it in GET /knobs
	f := newLabFixture(t, "host=dbproxy port=5432 database=orderlab user=orderlab password=xxxxx tls=off")
	proxy, faults := recordingProxy(t)
	f.lab.DBProxy = proxy
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
	f.lab.DBProxy = proxy
	_, _, err := f.runner.Run(context.Background(), latencyScenario(t))
	if err == nil || !strings.Contains(err.Error(), "not through the database proxy dbproxy") {
		t.Errorf("Run = %v, want a refusal: the services do not go through the proxy", err)
	}
	f.lab.DBProxy = nil
	if _, _, err := f.runner.Run(context.Background(), latencyScenario(t)); err == nil || !strings.Contains(err.Error(), "needs the lab's database proxy") {
		t.Errorf("Run without a proxy = %v, want a refusal", err)
	}
}
