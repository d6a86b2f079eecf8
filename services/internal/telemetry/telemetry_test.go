package telemetry

import (
	"testing"

	dto "github.com/prometheus/client_model/go"
)

// The registry exports the scheduler's latency histogram and the goroutines
// by state, which the board's scheduler panel and three scenarios read.
func TestRegistryExportsTheScheduler(t *testing.T) {
	mfs, err := NewRegistry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]dto.MetricType{}
	for _, mf := range mfs {
		got[mf.GetName()] = mf.GetType()
	}
	for name, typ := range map[string]dto.MetricType{
		"go_sched_latencies_seconds":               dto.MetricType_HISTOGRAM,
		"go_sched_goroutines_runnable_goroutines":  dto.MetricType_GAUGE,
		"go_sched_goroutines_running_goroutines":   dto.MetricType_GAUGE,
		"go_sched_goroutines_waiting_goroutines":   dto.MetricType_GAUGE,
		"go_sched_goroutines_not_in_go_goroutines": dto.MetricType_GAUGE,
		"go_sched_gomaxprocs_threads":              dto.MetricType_GAUGE,
		"go_goroutines":                            dto.MetricType_GAUGE,
		"go_threads":                               dto.MetricType_GAUGE,
		"go_memstats_heap_inuse_bytes":             dto.MetricType_GAUGE,
		"process_resident_memory_bytes":            dto.MetricType_GAUGE,
	} {
		if g, ok := got[name]; !ok || g != typ {
			t.Errorf("%s: exported %v (%v), want a %v", name, ok, g, typ)
		}
	}
	if _, ok := got["go_sched_pauses_total_gc_seconds"]; ok {
		t.Error("the GC pause histograms are exported too: only the scheduler's latency and goroutine states were asked for")
	}
}
