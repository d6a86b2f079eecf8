//go:build labcheck

package e2e

// The traces of the overload, in the test's receiver and (JAEGER set) in a
// real Jaeger: see TestLab.

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/orderlab/orderlab/internal/otlptest"
	"github.com/orderlab/orderlab/internal/poll"
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
	poll.Until(t, 20*time.Second, "every wait's span under its request, and the pipeline's batches linked", func() error {
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
		if len(missing) > 0 {
			return fmt.Errorf("%d spans received; missing: %s", len(spans), strings.Join(missing, "; "))
		}
		child, parent, _ := otlptest.UnderServer(spans, "orderlab-unbounded", "pool.acquire")
		t.Logf("%d spans; e.g. trace %s: %q > %q", len(spans), child.TraceIDHex(), parent.GetName(), child.GetName())
		return nil
	})
}

// exemplarLinksResolveInJaeger (JAEGER set): the exemplar link Grafana is
// provisioned with, filled with real exemplar trace ids from Prometheus,
// opens each trace in a real Jaeger: the link's page answers, and the trace
// it shows is there (with its pool.acquire span for the acquire-wait
// exemplars).
func (run *labRun) exemplarLinksResolveInJaeger(t *testing.T) {
	if run.jaeger == nil {
		t.Skip("JAEGER not set: make e2e-jaeger runs a real Jaeger with the compose config")
	}
	if err := run.otlp.ForwardErr(); err != nil {
		t.Fatalf("forwarding spans to Jaeger: %v", err)
	}
	templates := exemplarURLTemplates(t)
	opened := 0
	for _, tg := range run.targets {
		if !tg.Exemplar {
			continue
		}
		ids, err := run.exemplarTraceIDs(tg, 5)
		if err != nil {
			t.Errorf("%q %s: %v", tg.Panel, tg.RefID, err)
			continue
		}
		if len(ids) == 0 {
			t.Errorf("%q %s: no exemplar trace ids", tg.Panel, tg.RefID)
		}
		for _, id := range ids {
			for _, tmpl := range templates {
				link := strings.ReplaceAll(tmpl, traceIDVar, id)
				names, err := run.jaeger.openTraceLink(run.ctx, link, id)
				switch {
				case err != nil:
					t.Errorf("%q: exemplar link %s: %v", tg.Panel, link, err)
				case len(names) == 0:
					t.Errorf("%q: exemplar link %s: Jaeger has no spans of trace %s", tg.Panel, link, id)
				case strings.Contains(tg.Expr, "orderlab_db_pool_acquire_wait_seconds") && !slices.Contains(names, "pool.acquire"):
					t.Errorf("%q: exemplar link %s: trace without its pool.acquire span (spans %v)", tg.Panel, link, names)
				default:
					opened++
				}
			}
		}
	}
	t.Logf("%d exemplar links (%s) opened their trace in Jaeger", opened, strings.Join(templates, ", "))
}

// exemplarTraceIDs returns up to n distinct trace ids of the exemplars
// Grafana shows for tg over the load run, for each $service it is drawn for.
func (run *labRun) exemplarTraceIDs(tg boardTarget, n int) ([]string, error) {
	var ids []string
	seen := map[string]bool{}
	for _, svc := range serviceValues(tg) {
		series, err := run.api.exemplars(run.ctx, substitute(tg.Expr, svc), run.loadStart, run.now)
		if err != nil {
			return nil, err
		}
		found := 0
		for _, s := range series {
			for _, e := range s.Exemplars {
				if id := e.Labels["trace_id"]; id != "" && !seen[id] && found < n {
					seen[id] = true
					ids = append(ids, id)
					found++
				}
			}
		}
	}
	return ids, nil
}
