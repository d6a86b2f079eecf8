package otlptest_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkresource "go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/orderlab/orderlab/internal/otlptest"
)

// export sends, as service, a server span with a pool.acquire child and a
// batch span of its own trace linked to the server span, through the real
// OTLP/HTTP exporter (gzip when asked).
func export(t *testing.T, url, service string, gzip bool) {
	t.Helper()
	ctx := context.Background()
	opts := []otlptracehttp.Option{otlptracehttp.WithEndpointURL(url + "/v1/traces")}
	if gzip {
		opts = append(opts, otlptracehttp.WithCompression(otlptracehttp.GzipCompression))
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		t.Fatal(err)
	}
	res := sdkresource.NewSchemaless(attribute.String("service.name", service))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	tr := tp.Tracer("otlptest")
	reqCtx, server := tr.Start(ctx, "POST /orders", trace.WithSpanKind(trace.SpanKindServer))
	_, acquire := tr.Start(reqCtx, "pool.acquire")
	acquire.End()
	server.End()
	_, batch := tr.Start(ctx, "pipeline.batch", trace.WithNewRoot(), trace.WithLinks(trace.Link{SpanContext: server.SpanContext()}))
	batch.End()
	if err := tp.Shutdown(ctx); err != nil { // flushes
		t.Fatal(err)
	}
}

func TestReceiverKeepsWhatTheExporterSends(t *testing.T) {
	r := otlptest.NewReceiver(t)
	var forwarded int
	r.ForwardTo(func(body []byte) error {
		forwarded++
		return errors.New("jaeger down")
	})
	export(t, r.URL, "orderlab-a", false)
	export(t, r.URL, "orderlab-b", true)

	spans := r.Spans()
	if len(spans) != 6 {
		t.Fatalf("%d spans received, want 6: %v", len(spans), otlptest.Names(spans))
	}
	if forwarded != 2 {
		t.Errorf("%d requests forwarded, want 2", forwarded)
	}
	if err := r.ForwardErr(); err == nil || err.Error() != "jaeger down" {
		t.Errorf("ForwardErr = %v, want the first forwarding error", err)
	}

	acquire, server, ok := otlptest.UnderServer(spans, "orderlab-b", "pool.acquire")
	if !ok {
		t.Fatalf("no pool.acquire under orderlab-b's server span in %v", otlptest.Names(spans))
	}
	if acquire.Service != "orderlab-b" || server.Service != "orderlab-b" || server.GetName() != "POST /orders" {
		t.Errorf("UnderServer = %s/%s under %s/%s", acquire.Service, acquire.GetName(), server.Service, server.GetName())
	}
	if len(acquire.TraceIDHex()) != 32 || acquire.TraceIDHex() != server.TraceIDHex() || len(server.SpanIDHex()) != 16 {
		t.Errorf("ids: trace %s / %s, span %s", acquire.TraceIDHex(), server.TraceIDHex(), server.SpanIDHex())
	}
	if _, _, ok := otlptest.UnderServer(spans, "orderlab-b", "pipeline.batch"); ok {
		t.Error("pipeline.batch, a root span, found under a server span")
	}
	if _, _, ok := otlptest.UnderServer(spans, "orderlab-c", "pool.acquire"); ok {
		t.Error("a span found for a service that sent none")
	}

	if got, ok := otlptest.Child(spans, server, "pool.acquire"); !ok || got.SpanIDHex() != acquire.SpanIDHex() {
		t.Errorf("Child(server, pool.acquire) = %v, %v", got.SpanIDHex(), ok)
	}
	if _, ok := otlptest.Child(spans, server, "pipeline.batch"); ok {
		t.Error("Child found pipeline.batch under the server span")
	}
	batches := otlptest.Named(spans, "pipeline.batch")
	if len(batches) != 2 {
		t.Fatalf("Named(pipeline.batch) = %d spans, want 2", len(batches))
	}
	if !slices.ContainsFunc(batches, func(b otlptest.Span) bool {
		return len(b.GetLinks()) == 1 && string(b.GetLinks()[0].GetSpanId()) == string(server.GetSpanId())
	}) {
		t.Error("no pipeline.batch links to orderlab-b's server span")
	}
}
