package telemetry

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"
)

// A sampled request's observation carries its trace id as an exemplar.
func TestObserveKeepsTheTraceID(t *testing.T) {
	h := prometheus.NewHistogram(DurationHistogram("test_seconds", "test", []float64{0.1, 1}))
	reg := prometheus.NewRegistry()
	reg.MustRegister(h)
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{1, 2, 3},
		SpanID:     trace.SpanID{4},
		TraceFlags: trace.FlagsSampled,
	})
	Observe(trace.ContextWithSpanContext(context.Background(), sc), h, 0.5)
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, b := range fams[0].GetMetric()[0].GetHistogram().GetBucket() {
		for _, l := range b.GetExemplar().GetLabel() {
			ids = append(ids, l.GetName()+"="+l.GetValue())
		}
	}
	if want := "trace_id=" + sc.TraceID().String(); len(ids) != 1 || ids[0] != want {
		t.Errorf("exemplars %v, want [%s]", ids, want)
	}
}

// Within a window a child records its first exemplar and those of new
// maxima only; the next window starts again.
func TestExemplarsAreBoundedPerWindow(t *testing.T) {
	a, b := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "a"}), prometheus.NewHistogram(prometheus.HistogramOpts{Name: "b"})
	t0 := time.Unix(1000, 0)
	due := 0
	for i, v := range []float64{0.5, 0.1, 0.2, 0.7, 0.6, 0.7, 0.9, 0.3} {
		if exemplarDue(a, v, t0.Add(time.Duration(i)*time.Millisecond)) {
			due++
		}
	}
	if due != 3 { // 0.5, 0.7, 0.9
		t.Errorf("%d exemplars in a window, want 3 (the first and two new maxima)", due)
	}
	if !exemplarDue(b, 0.1, t0) {
		t.Error("another child's first observation got no exemplar")
	}
	if !exemplarDue(a, 0.1, t0.Add(ExemplarInterval)) {
		t.Error("the next window's first observation got no exemplar")
	}
	if exemplarDue(a, 0.05, t0.Add(ExemplarInterval+time.Millisecond)) {
		t.Error("a smaller value in the same window got one")
	}
}
