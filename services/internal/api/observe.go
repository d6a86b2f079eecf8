package api

import (
	"context"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/orderlab/orderlab/services/internal/telemetry"
)

// observer gives every request the API serves its observation and its
// bounds: its server span, continuing the caller's trace; its
// REQUEST_TIMEOUT deadline, like HikariCP's connection-timeout (a request
// still waiting for the pool when it passes is answered 503); its
// REQUEST_BUFFER_BYTES buffer (buffer.go); and its latency on
// orderlab_http_request_duration_seconds, labelled by the route template
// (never the raw path) and a known method, with the trace id as exemplar.
// The routes that reach the database run it once the model has admitted
// the request (admission.go), so that a refusal pays for none of it; the
// other routes run it as gin middleware (observed). The knobs are read per
// request.
type observer struct {
	live    *LiveConfig
	met     *metrics
	tracer  trace.Tracer
	buffers buffers
}

func newObserver(live *LiveConfig, met *metrics, tp trace.TracerProvider) *observer {
	return &observer{live: live, met: met, tracer: tp.Tracer("github.com/orderlab/orderlab/services/internal/api")}
}

// observed is the observer as gin middleware: the request is in flight and
// timed from now.
func (o *observer) observed(c *gin.Context) {
	o.met.inFlight.Inc()
	defer o.met.inFlight.Dec()
	o.serve(c, time.Now(), c.Next)
}

// serve runs next under the request's span and deadline, both counted from
// start, when the request arrived. It records the latency and ends the span
// in a deferred call, so that a panicking handler is counted too (as it
// unwinds, before recovery has written its 500).
func (o *observer) serve(c *gin.Context, start time.Time, next func()) {
	k := o.live.Load()
	r := c.Request
	route := c.FullPath()
	ctx := telemetry.Propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	ctx, span := o.tracer.Start(ctx, spanName(r.Method, route), trace.WithSpanKind(trace.SpanKindServer),
		trace.WithTimestamp(start), trace.WithAttributes(semconv.HTTPRequestMethodKey.String(methodLabel(r.Method)),
			semconv.HTTPRoute(route), semconv.URLPath(r.URL.Path), semconv.UserAgentOriginal(r.UserAgent())))
	ctx, cancel := context.WithDeadline(ctx, start.Add(k.RequestTimeout))
	c.Request = r.WithContext(ctx)
	defer func() {
		cancel()
		status := c.Writer.Status()
		if route == "" {
			route = "unmatched"
		}
		h := o.met.duration.WithLabelValues(methodLabel(r.Method), route, strconv.Itoa(status))
		telemetry.Observe(ctx, h, time.Since(start).Seconds())
		span.SetAttributes(semconv.HTTPResponseStatusCode(status))
		if status >= 500 {
			span.SetStatus(codes.Error, "")
		}
		span.End()
	}()
	defer o.buffers.hold(k)()
	next()
}

// spanName is the server span's name: the method and the route template, or
// the method alone for a request that matched no route.
func spanName(method, route string) string {
	method = methodLabel(method)
	if method == "OTHER" {
		method = "HTTP"
	}
	if route == "" {
		return method
	}
	return method + " " + route
}
