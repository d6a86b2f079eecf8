package e2e

// The traces of the overload, in the test's receiver and (JAEGER set) in a
// real Jaeger: see TestLab.

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/orderlab/orderlab/internal/otlptest"
)

// traces: each wait is a span under its request's HTTP server span, and
// the pipeline's batches link to their requests.
func (run *labRun) traces(t *testing.T) {
	want := []struct{ service, child string }{
		{"orderlab-unbounded", "pool.acquire"},
		{"orderlab-semaphore", "limiter.wait"},
		{"orderlab-semaphore", "pool.acquire"},
		{"orderlab-pipeline", "pipeline.enqueue"},
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		spans := run.otlp.Spans()
		var missing []string
		for _, w := range want {
			if _, _, ok := otlptest.UnderServer(spans, w.service, w.child); !ok {
				missing = append(missing, w.service+": "+w.child+" under the HTTP server span")
			}
		}
		batchWithLinks := false
		for _, s := range spans {
			if s.Service == "orderlab-pipeline" && s.GetName() == "pipeline.batch" && len(s.GetLinks()) > 0 {
				batchWithLinks = true
			}
		}
		if !batchWithLinks {
			missing = append(missing, "orderlab-pipeline: pipeline.batch linked to its requests")
		}
		if len(missing) == 0 {
			child, parent, _ := otlptest.UnderServer(spans, "orderlab-unbounded", "pool.acquire")
			t.Logf("%d spans; e.g. trace %s: %q > %q", len(spans), child.TraceIDHex(), parent.GetName(), child.GetName())
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d spans received; missing: %s", len(spans), strings.Join(missing, "; "))
		}
		time.Sleep(time.Second)
	}
}

// exemplarLinksResolveInJaeger (JAEGER set): the trace ids of the
// acquire-wait exemplars open their trace in a real Jaeger, as Grafana's
// exemplar links do.
func (run *labRun) exemplarLinksResolveInJaeger(t *testing.T) {
	if run.jaeger == nil {
		t.Skip("JAEGER not set: make e2e-jaeger runs a real Jaeger with the compose config")
	}
	if err := run.otlp.ForwardErr(); err != nil {
		t.Fatalf("forwarding spans to Jaeger: %v", err)
	}
	// The exemplars Grafana shows on the acquire-wait panel for unbounded.
	expr := `histogram_quantile(0.99, sum by (job) (rate(orderlab_db_pool_acquire_wait_seconds{job="unbounded"}[1m])))`
	series, err := run.api.exemplars(run.ctx, expr, run.loadStart, run.now)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range series {
		for _, e := range s.Exemplars {
			ids = append(ids, e.Labels["trace_id"])
		}
	}
	if len(ids) == 0 {
		t.Fatal("no exemplars on the acquire-wait query")
	}
	resolved := 0
	var lastErr error
	for _, id := range ids[:min(len(ids), 10)] {
		names, err := run.jaeger.trace(run.ctx, id)
		if err != nil {
			lastErr = err
			continue
		}
		if slices.Contains(names, "pool.acquire") {
			resolved++
		}
	}
	if resolved == 0 {
		t.Fatalf("none of %d exemplar trace IDs opens a trace with a pool.acquire span in Jaeger (last error %v)", min(len(ids), 10), lastErr)
	}
	t.Logf("%d of %d exemplar trace IDs open in Jaeger with their pool.acquire span", resolved, min(len(ids), 10))
}
