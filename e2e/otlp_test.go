package e2e

import (
	"compress/gzip"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is an OTLP/HTTP trace endpoint (POST /v1/traces, protobuf)
// that keeps every span it receives: the lab's trace backend, in the test.
type otlpReceiver struct {
	URL string // for OTEL_EXPORTER_OTLP_ENDPOINT

	// forward, when set, also sends every request on (to a real Jaeger).
	forward func(body []byte) error

	mu         sync.Mutex
	spans      []span
	forwardErr error
}

// span is a received span with the service that sent it.
type span struct {
	Service  string
	Name     string
	Kind     tracepb.Span_SpanKind
	TraceID  string
	SpanID   string
	ParentID string
	Links    int
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	r := &otlpReceiver{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", r.handleTraces)
	r.URL = "http://" + serveLoopback(t, mux)
	return r
}

// serveLoopback serves h on a free 127.0.0.1 port until the test ends and
// returns the address.
func serveLoopback(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln) //nolint:errcheck // ends with Close
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

func (r *otlpReceiver) handleTraces(w http.ResponseWriter, req *http.Request) {
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
	var got []span
	for _, rs := range export.GetResourceSpans() {
		service := ""
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.GetKey() == "service.name" {
				service = kv.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				got = append(got, span{
					Service:  service,
					Name:     s.GetName(),
					Kind:     s.GetKind(),
					TraceID:  hex.EncodeToString(s.GetTraceId()),
					SpanID:   hex.EncodeToString(s.GetSpanId()),
					ParentID: hex.EncodeToString(s.GetParentSpanId()),
					Links:    len(s.GetLinks()),
				})
			}
		}
	}
	var ferr error
	if r.forward != nil {
		ferr = r.forward(data)
	}
	r.mu.Lock()
	r.spans = append(r.spans, got...)
	if ferr != nil && r.forwardErr == nil {
		r.forwardErr = ferr
	}
	r.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Write(out) //nolint:errcheck // the exporter retries on its own
}

// Spans returns a copy of every span received so far.
func (r *otlpReceiver) Spans() []span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]span(nil), r.spans...)
}

// ForwardErr returns the first error forwarding to Jaeger, if any.
func (r *otlpReceiver) ForwardErr() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.forwardErr
}

// childOfServerSpan finds a span called name, sent by service, whose parent
// is that service's HTTP server span: the wait it measures happened inside
// the request.
func childOfServerSpan(spans []span, service, name string) (child, parent span, ok bool) {
	servers := map[string]span{}
	for _, s := range spans {
		if s.Service == service && s.Kind == tracepb.Span_SPAN_KIND_SERVER {
			servers[s.TraceID+"/"+s.SpanID] = s
		}
	}
	for _, s := range spans {
		if s.Service != service || s.Name != name {
			continue
		}
		if p, found := servers[s.TraceID+"/"+s.ParentID]; found {
			return s, p, true
		}
	}
	return span{}, span{}, false
}
