package tasks

import (
	"runtime/metrics"

	"github.com/orderlab/orderlab/loadtest/scrape"
)

// The runtime/metrics read while jobs run: heap and goroutines by state
// every sample, the scheduling latency before and after.
const (
	heapObjects  = "/memory/classes/heap/objects:bytes"
	runnable     = "/sched/goroutines/runnable:goroutines"
	running      = "/sched/goroutines/running:goroutines"
	waiting      = "/sched/goroutines/waiting:goroutines"
	notInGo      = "/sched/goroutines/not-in-go:goroutines"
	schedLatency = "/sched/latencies:seconds"
)

// gauges reads the heap in in-use spans and the goroutines by state
// without stopping the world (runtime.ReadMemStats would, on every sample).
type gauges struct {
	heap                                uint64
	runnable, running, waiting, notInGo float64
}

func readGauges() gauges {
	s := []metrics.Sample{{Name: heapObjects}, {Name: runnable}, {Name: running}, {Name: waiting}, {Name: notInGo}}
	metrics.Read(s)
	u := func(i int) uint64 {
		if s[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return s[i].Value.Uint64()
	}
	return gauges{heap: u(0), runnable: float64(u(1)), running: float64(u(2)), waiting: float64(u(3)), notInGo: float64(u(4))}
}

// latencyBuckets reads the scheduling latency histogram as cumulative
// buckets, for scrape.Delta and scrape.Quantile.
func latencyBuckets() []scrape.Bucket {
	s := []metrics.Sample{{Name: schedLatency}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64Histogram {
		return nil
	}
	h := s[0].Value.Float64Histogram()
	out := make([]scrape.Bucket, len(h.Counts))
	var cum float64
	for i, c := range h.Counts {
		cum += float64(c)
		out[i] = scrape.Bucket{UpperBound: h.Buckets[i+1], Count: cum}
	}
	return out
}
