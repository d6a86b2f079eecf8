// Package telemetry owns the process-wide observability plumbing: the JSON
// logger, the OpenTelemetry tracer provider and its OTLP exporter, the
// Prometheus registry with the runtime collectors, and exemplars.
package telemetry

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"regexp"
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
func NewLogger(w io.Writer, level slog.Leveler, service string) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level})).With("service", service)
}

// NewRegistry returns a non-global registry with the Go runtime and process
// collectors (goroutines, OS threads, heap, RSS, open files) and the
// scheduler's own view (schedulerMetrics).
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(schedulerMetrics)),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return reg
}

// schedulerMetrics are the runtime/metrics of Go's scheduler that the
// default Go collector leaves out: how long runnable goroutines wait for a
// thread to run on (go_sched_latencies_seconds: CPU contention, measured
// rather than guessed), and goroutines by state (go_sched_goroutines_*:
// runnable, running, waiting, and not-in-go, in a system call or cgo,
// which is what holds an OS thread: os-thread-pinning), and GOMAXPROCS
// (go_sched_gomaxprocs_threads), the threads running Go code at once, that
// go_threads is measured against.
var schedulerMetrics = collectors.GoRuntimeMetricsRule{
	Matcher: regexp.MustCompile(`^/sched/(gomaxprocs:threads|latencies:seconds|goroutines/(runnable|running|waiting|not-in-go):goroutines)$`),
}

// Propagator is the W3C trace-context and baggage propagator every service uses.
var Propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// Tracing says where spans go, from the standard OTEL_* variables
// (ReadTracing).
type Tracing struct {
	ServiceName string
	// Endpoint is the OTLP traces URL; empty, spans are still made (their
	// trace ids become exemplars) but nothing is exported.
	Endpoint string
	Protocol string // http/protobuf or grpc
}

// ReadTracing reads Tracing through getenv: OTEL_SERVICE_NAME (default
// service), OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT,
// and OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL: http/protobuf (default) or
// grpc. A bad protocol is an error here, so that it is reported with the
// other settings before anything starts.
func ReadTracing(getenv func(string) string, service string) (Tracing, error) {
	t := Tracing{ServiceName: getenv("OTEL_SERVICE_NAME")}
	if t.ServiceName == "" {
		t.ServiceName = service
	}
	endpoint, generic := getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), false
	if endpoint == "" {
		endpoint, generic = getenv("OTEL_EXPORTER_OTLP_ENDPOINT"), true
	}
	if endpoint == "" {
		return t, nil
	}
	name := "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	if t.Protocol = getenv(name); t.Protocol == "" {
		name = "OTEL_EXPORTER_OTLP_PROTOCOL"
		t.Protocol = getenv(name)
	}
	switch t.Protocol {
	case "", "http/protobuf":
		t.Protocol = "http/protobuf"
		if generic {
			// The spec: a signal path is appended to the generic endpoint.
			endpoint = strings.TrimSuffix(endpoint, "/") + "/v1/traces"
		}
	case "grpc":
	default:
		return Tracing{}, fmt.Errorf("%s=%q: want http/protobuf or grpc", name, t.Protocol)
	}
	t.Endpoint = endpoint
	return t, nil
}

// NewTracerProvider builds the tracer provider t describes.
func NewTracerProvider(ctx context.Context, t Tracing) (*sdktrace.TracerProvider, error) {
	res, err := resource.Merge(resource.Default(), resource.NewWithAttributes(semconv.SchemaURL,
		semconv.ServiceName(t.ServiceName), semconv.ServiceNamespace("orderlab")))
	if err != nil {
		return nil, fmt.Errorf("otel resource: %w", err)
	}
	opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
	if t.Endpoint != "" {
		var exp sdktrace.SpanExporter
		if t.Protocol == "grpc" {
			exp, err = otlptracegrpc.New(ctx, otlptracegrpc.WithEndpointURL(t.Endpoint))
		} else {
			exp, err = otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(t.Endpoint))
		}
		if err != nil {
			return nil, fmt.Errorf("otlp exporter: %w", err)
		}
		opts = append(opts, sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(time.Second)))
	}
	return sdktrace.NewTracerProvider(opts...), nil
}
