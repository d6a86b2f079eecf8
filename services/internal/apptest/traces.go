package apptest

import (
	"bytes"
	"net/http"
	"testing"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/orderlab/orderlab/services/internal/app"
)

// Traced runs svc exporting to a fresh OTLP receiver, sends one order with
// a db_delay, stops the service (which flushes the exporter) and returns
// the spans with the HTTP server span of the order.
func Traced(t *testing.T, svc app.Service, env map[string]string) (spans []*tracepb.Span, server *tracepb.Span) {
	rcv := NewOTLPReceiver(t)
	vars := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL}
	for k, v := range env {
		vars[k] = v
	}
	inst := Start(t, svc, vars)
	if r, err := inst.PostOrder("/orders?db_delay=10ms", OrderBody("traced", 2), ""); err != nil || r.Status != http.StatusCreated {
		t.Fatalf("POST /orders = %v %d %s", err, r.Status, r.Body)
	}
	if err := inst.Stop(); err != nil {
		t.Fatal(err)
	}
	spans = rcv.Spans()
	for _, s := range spans {
		if s.GetKind() == tracepb.Span_SPAN_KIND_SERVER && s.GetName() == "POST /orders" {
			server = s
		}
	}
	if server == nil {
		t.Fatalf("no HTTP server span for POST /orders among %d spans: %v", len(spans), names(spans))
	}
	return spans, server
}

// ChildOf returns the span called name whose parent is parent, or fails.
func ChildOf(t *testing.T, spans []*tracepb.Span, parent *tracepb.Span, name string) *tracepb.Span {
	t.Helper()
	for _, s := range spans {
		if s.GetName() == name && bytes.Equal(s.GetParentSpanId(), parent.GetSpanId()) && bytes.Equal(s.GetTraceId(), parent.GetTraceId()) {
			return s
		}
	}
	t.Fatalf("no %q span under %q (%s); spans: %v", name, parent.GetName(), SpanID(parent.GetSpanId()), names(spans))
	return nil
}

// Named returns the spans called name.
func Named(spans []*tracepb.Span, name string) []*tracepb.Span {
	var out []*tracepb.Span
	for _, s := range spans {
		if s.GetName() == name {
			out = append(out, s)
		}
	}
	return out
}

func names(spans []*tracepb.Span) []string {
	out := make([]string, len(spans))
	for i, s := range spans {
		out[i] = s.GetName()
	}
	return out
}
