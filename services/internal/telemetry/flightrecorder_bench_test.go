//go:build unix

package telemetry

import (
	"io"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkFlightRecorderCost is what the flight recorder's execution
// tracer adds to an HTTP round trip over loopback (goroutine switches,
// network polling, system calls: the events the tracer records), off and
// on, 16 clients at once. Besides the wall time per round trip it reports
// the process's CPU time per round trip (cpu-ns/op: client and server
// both), which a busy machine disturbs less. docs/metrics.md quotes it:
//
//	go test -run '^$' -bench BenchmarkFlightRecorderCost -count 8 ./services/internal/telemetry/
func BenchmarkFlightRecorderCost(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"id":"0190d5e1-7c9b-7cc8-8e4b-6e0d0a1f3a55","status":"created"}`)
	}))
	defer srv.Close()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	defer hc.CloseIdleConnections()
	roundTrips := func(b *testing.B) {
		b.SetParallelism(8) // 8 per GOMAXPROCS: 16 clients on 2 CPUs
		cpu0 := cpuTime(b)
		defer func() { b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/op") }()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				resp, err := hc.Get(srv.URL)
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	b.Run("off", roundTrips)
	b.Run("on", func(b *testing.B) {
		stop, err := StartFlightRecorder()
		if err != nil {
			b.Fatal(err)
		}
		defer stop()
		roundTrips(b)
	})
}
