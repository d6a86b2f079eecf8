// Package otlptest is the trace backend of the tests: a real OTLP/HTTP
// endpoint on loopback that keeps every span it is sent (Receiver), and the
// queries that find a span in the tree (Named, Child, UnderServer).
//
// It stands in for Jaeger, which is too heavy to build for each test run;
// the exporter, the protocol and the payload are real. A test that wants the
// real Jaeger as well forwards what the receiver gets (ForwardTo).
package otlptest

import (
	"compress/gzip"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Span is a received span with the service.name of the resource that sent it.
type Span struct {
	*tracepb.Span
	Service string
}

// TraceIDHex is the trace id as Jaeger and exemplars show it.
func (s Span) TraceIDHex() string { return hex.EncodeToString(s.GetTraceId()) }

// SpanIDHex is the span id as Jaeger shows it.
func (s Span) SpanIDHex() string { return hex.EncodeToString(s.GetSpanId()) }

// Receiver is an OTLP/HTTP trace endpoint (POST /v1/traces, protobuf, plain
// or gzip) that keeps every span it receives.
type Receiver struct {
	URL string // for OTEL_EXPORTER_OTLP_ENDPOINT

	mu         sync.Mutex
	spans      []Span
	forward    func(body []byte) error
	forwardErr error
}

// NewReceiver starts a receiver on loopback that stops when t ends.
func NewReceiver(t testing.TB) *Receiver {
	t.Helper()
	r := &Receiver{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", r.handleTraces)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

// ForwardTo sends every request body the receiver gets on to forward too
// (a real Jaeger's OTLP endpoint); the first error is kept for ForwardErr.
// Call it before anything exports to the receiver.
func (r *Receiver) ForwardTo(forward func(body []byte) error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.forward = forward
}

// ForwardErr returns the first error of forwarding, if any.
func (r *Receiver) ForwardErr() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.forwardErr
}

// Spans returns a copy of every span received so far.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

func (r *Receiver) handleTraces(w http.ResponseWriter, req *http.Request) {
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		gz, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		defer gz.Close()
		body = gz
	}
	data, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var export coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(data, &export); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var got []Span
	for _, rs := range export.GetResourceSpans() {
		service := ""
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.GetKey() == "service.name" {
				service = kv.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				got = append(got, Span{Span: s, Service: service})
			}
		}
	}
	r.mu.Lock()
	forward := r.forward
	r.mu.Unlock()
	var ferr error
	if forward != nil {
		ferr = forward(data)
	}
	r.mu.Lock()
	r.spans = append(r.spans, got...)
	if ferr != nil && r.forwardErr == nil {
		r.forwardErr = ferr
	}
	r.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out) // the exporter retries on its own
}
