package otlptest

import (
	"bytes"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// isParent says whether parent is child's parent span.
func isParent(parent, child Span) bool {
	return bytes.Equal(child.GetParentSpanId(), parent.GetSpanId()) && bytes.Equal(child.GetTraceId(), parent.GetTraceId())
}

// Named returns the spans called name.
func Named(spans []Span, name string) []Span {
	var out []Span
	for _, s := range spans {
		if s.GetName() == name {
			out = append(out, s)
		}
	}
	return out
}

// Child returns a span called name whose parent is parent.
func Child(spans []Span, parent Span, name string) (Span, bool) {
	for _, s := range spans {
		if s.GetName() == name && isParent(parent, s) {
			return s, true
		}
	}
	return Span{}, false
}

// UnderServer returns a span called name, sent by service, whose parent is
// one of that service's HTTP server spans, and that server span: the work
// the span measures happened inside a request.
func UnderServer(spans []Span, service, name string) (child, server Span, ok bool) {
	type key struct{ trace, span string }
	servers := map[key]Span{}
	for _, s := range spans {
		if s.Service == service && s.GetKind() == tracepb.Span_SPAN_KIND_SERVER {
			servers[key{string(s.GetTraceId()), string(s.GetSpanId())}] = s
		}
	}
	for _, s := range spans {
		if s.Service != service || s.GetName() != name {
			continue
		}
		if p, found := servers[key{string(s.GetTraceId()), string(s.GetParentSpanId())}]; found {
			return s, p, true
		}
	}
	return Span{}, Span{}, false
}

// Names lists the spans' names, for messages.
func Names(spans []Span) []string {
	out := make([]string, len(spans))
	for i, s := range spans {
		out[i] = s.GetName()
	}
	return out
}
