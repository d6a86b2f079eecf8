package telemetry

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"
)

// Observe records v on o, with the trace id of ctx's span as an exemplar
// when that span is sampled, so that a dot on a latency panel leads to the
// trace that made it.
func Observe(ctx context.Context, o prometheus.Observer, v float64) {
	sc := trace.SpanContextFromContext(ctx)
	if eo, ok := o.(prometheus.ExemplarObserver); ok && sc.IsSampled() {
		eo.ObserveWithExemplar(v, prometheus.Labels{"trace_id": sc.TraceID().String()})
		return
	}
	o.Observe(v)
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
