// Package telemetry owns the process-wide observability plumbing: the JSON
// logger, the OpenTelemetry tracer provider and its OTLP exporter, the
// Prometheus registry with the runtime collectors, and exemplars.
package telemetry

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// NewLogger returns a JSON slog logger at level ("debug", "info", "warn",
// "error") with the service's name on every line.
func NewLogger(w io.Writer, level slog.Level, service string) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level})).With("service", service)
}

// NewRegistry returns a non-global registry with the Go runtime and process
// collectors (goroutines, OS threads, heap, RSS, open files).
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return reg
}

// Propagator is the W3C trace-context and baggage propagator every service uses.
var Propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// NewTracerProvider builds the tracer provider from the standard OTEL_*
// variables read through getenv. With neither OTEL_EXPORTER_OTLP_ENDPOINT nor
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT set, spans are still made (their trace
// ids become exemplars) but nothing is exported. The protocol is
// OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL: http/protobuf (default) or grpc.
func NewTracerProvider(ctx context.Context, service string, getenv func(string) string) (*sdktrace.TracerProvider, error) {
	name := getenv("OTEL_SERVICE_NAME")
	if name == "" {
		name = service
	}
	res, err := resource.Merge(resource.Default(), resource.NewWithAttributes(semconv.SchemaURL,
		semconv.ServiceName(name), semconv.ServiceNamespace("orderlab")))
	if err != nil {
		return nil, fmt.Errorf("otel resource: %w", err)
	}
	opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}

	endpoint, generic := getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), false
	if endpoint == "" {
		endpoint, generic = getenv("OTEL_EXPORTER_OTLP_ENDPOINT"), true
	}
	if endpoint != "" {
		protocol := getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
		if protocol == "" {
			protocol = getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
		}
		var exp sdktrace.SpanExporter
		switch protocol {
		case "", "http/protobuf":
			if generic {
				// The spec: a signal path is appended to the generic endpoint.
				endpoint = strings.TrimSuffix(endpoint, "/") + "/v1/traces"
			}
			exp, err = otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(endpoint))
		case "grpc":
			exp, err = otlptracegrpc.New(ctx, otlptracegrpc.WithEndpointURL(endpoint))
		default:
			return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%q: want http/protobuf or grpc", protocol)
		}
		if err != nil {
			return nil, fmt.Errorf("otlp exporter: %w", err)
		}
		opts = append(opts, sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(time.Second)))
	}
	return sdktrace.NewTracerProvider(opts...), nil
}
