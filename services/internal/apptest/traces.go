package apptest

import (
	"net/http"
	"testing"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/orderlab/orderlab/internal/otlptest"
	"github.com/orderlab/orderlab/services/internal/app"
)

// Traced runs svc exporting to a fresh OTLP receiver, sends one order with
// a db_delay, stops the service (which flushes the exporter) and returns
// the spans with the HTTP server span of the order.
func Traced(t *testing.T, svc app.Service, env map[string]string) (spans []otlptest.Span, server otlptest.Span) {
	rcv := otlptest.NewReceiver(t)
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
	if server.Span == nil {
		t.Fatalf("no HTTP server span for POST /orders among %d spans: %v", len(spans), otlptest.Names(spans))
	}
	return spans, server
}

// ChildOf returns the span called name whose parent is parent, or fails.
func ChildOf(t *testing.T, spans []otlptest.Span, parent otlptest.Span, name string) otlptest.Span {
	t.Helper()
	s, ok := otlptest.Child(spans, parent, name)
	if !ok {
		t.Fatalf("no %q span under %q (%s); spans: %v", name, parent.GetName(), parent.SpanIDHex(), otlptest.Names(spans))
	}
	return s
}
