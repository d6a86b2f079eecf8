package telemetry

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"
)

// Observe records v on o, with the trace id of ctx's span as an exemplar
// when that span is sampled and the exemplar is due (exemplarDue), so that a
// dot on a latency panel leads to the trace that made it.
func Observe(ctx context.Context, o prometheus.Observer, v float64) {
	sc := trace.SpanContextFromContext(ctx)
	if eo, ok := o.(prometheus.ExemplarObserver); ok && sc.IsSampled() && exemplarDue(o, v, time.Now()) {
		eo.ObserveWithExemplar(v, prometheus.Labels{"trace_id": sc.TraceID().String()})
		return
	}
	o.Observe(v)
}

// ExemplarInterval is the window in which each histogram child records at
// most its first exemplar and those of new maxima. Every exemplar a native
// histogram records takes its exemplar mutex, and under a storm of
// thousands of answers a second hundreds of handlers queued on it; a
// scrape keeps a few exemplars per child anyway. A new maximum is always
// kept, so that the slowest answers of a window, the dots that matter on a
// p99 panel, still have theirs: in a window of n observations in random
// order that is about ln n of them.
const ExemplarInterval = time.Second

// exemplarWindows holds each child's window (*exemplarWindow), keyed by the
// child: sync.Map reads of keys that stay are lock-free.
var exemplarWindows sync.Map

type exemplarWindow struct {
	start atomic.Int64  // Unix ns
	max   atomic.Uint64 // math.Float64bits of the window's largest value
}

// exemplarDue says whether an observation of v on o at now gets an exemplar.
func exemplarDue(o prometheus.Observer, v float64, now time.Time) bool {
	w, ok := exemplarWindows.Load(o)
	if !ok {
		w, _ = exemplarWindows.LoadOrStore(o, new(exemplarWindow))
	}
	win := w.(*exemplarWindow)
	t, start := now.UnixNano(), win.start.Load()
	if t-start >= int64(ExemplarInterval) {
		if !win.start.CompareAndSwap(start, t) {
			return false // another observation opened the window
		}
		win.max.Store(math.Float64bits(v))
		return true
	}
	for {
		m := win.max.Load()
		if v <= math.Float64frombits(m) {
			return false
		}
		if win.max.CompareAndSwap(m, math.Float64bits(v)) {
			return true
		}
	}
}

// DurationHistogram returns the options every duration histogram here
// shares: classic buckets for dashboards and recording rules, and a native
// histogram (10% resolution) for exact quantiles where Prometheus scrapes it.
func DurationHistogram(name, help string, buckets []float64) prometheus.HistogramOpts {
	return prometheus.HistogramOpts{
		Name:                            name,
		Help:                            help,
		Buckets:                         buckets,
		NativeHistogramBucketFactor:     1.1,
		NativeHistogramMaxBucketNumber:  160,
		NativeHistogramMinResetDuration: time.Hour,
	}
}

// Register registers every collector on reg, stopping at the first error.
func Register(reg prometheus.Registerer, cs ...prometheus.Collector) error {
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}
