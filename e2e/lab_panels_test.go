//go:build labcheck

package e2e

// The board's panel queries against the running lab: see TestLab.

import (
	"math"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
)

// serviceVariable: the board's $service variable lists the three models.
func (run *labRun) serviceVariable(t *testing.T) {
	got, err := run.api.labelValues(run.ctx, "job", "orderlab_service_info")
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(got)
	want := slices.Sorted(slices.Values(modelServices))
	if !slices.Equal(got, want) {
		t.Errorf("label_values(orderlab_service_info, job) = %v, want %v", got, want)
	}
}

// panelQueries: every PromQL query of every panel returns series, for each
// value of $service it is drawn for, and not only NaN.
func (run *labRun) panelQueries(t *testing.T) {
	evaluated := 0
	for _, tg := range run.targets {
		// The adaptive limit's signal exists only with LIMIT=adaptive, and
		// the e2e's semaphore runs a fixed limit (labVars): the limiter's
		// own test checks that gauge (services/internal/limiter).
		if strings.Contains(tg.Expr, "orderlab_limiter_signal") && labVars["LIMIT"] != "adaptive" {
			t.Logf("%s / %q %s: not checked, the e2e's semaphore has a fixed LIMIT", tg.Board, tg.Panel, tg.RefID)
			continue
		}
		// PgBouncer's row reads the pgbouncer profile's exporter, which the
		// e2e does not run (startLab); make lab-test queries it.
		if strings.Contains(tg.Expr, "pgbouncer_") {
			t.Logf("%s / %q %s: not checked, PgBouncer is the pgbouncer profile's", tg.Board, tg.Panel, tg.RefID)
			continue
		}
		// The pitfall alerts' panel is empty unless a pitfall fires (the
		// overload may or may not name one): its query must evaluate.
		if strings.Contains(tg.Expr, "ALERTS{") {
			samples, err := run.api.query(run.ctx, substitute(tg.Expr, strings.Join(modelServices, "|")), run.now)
			if err != nil {
				t.Errorf("%s / %q %s: %v\n  %s", tg.Board, tg.Panel, tg.RefID, err, tg.Expr)
			}
			t.Logf("%s / %q: %d pitfall alerts firing after the overload", tg.Board, tg.Panel, len(samples))
			continue
		}
		// A query may be NaN for one service (0/0: semaphore's acquires
		// never wait), but one that is NaN for every service draws nothing.
		finite := 0
		for _, svc := range serviceValues(tg) {
			expr := substitute(tg.Expr, svc)
			samples, err := run.api.query(run.ctx, expr, run.now)
			evaluated++
			switch {
			case err != nil:
				t.Errorf("%s / %q %s ($service=%s): %v\n  %s", tg.Board, tg.Panel, tg.RefID, svc, err, expr)
			case len(samples) == 0:
				t.Errorf("%s / %q %s ($service=%s): no series\n  %s", tg.Board, tg.Panel, tg.RefID, svc, expr)
			}
			for _, s := range samples {
				if !math.IsNaN(s.Value) && !math.IsInf(s.Value, 0) {
					finite++
				}
			}
		}
		if finite == 0 {
			t.Errorf("%s / %q %s: only NaN or Inf values for every service\n  %s", tg.Board, tg.Panel, tg.RefID, tg.Expr)
		}
	}
	t.Logf("%d panel queries evaluated (%d targets)", evaluated, len(run.targets))
}

// annotationQueries: the board's PromQL annotation queries evaluate.
func (run *labRun) annotationQueries(t *testing.T) {
	for _, b := range run.boards {
		for _, a := range b.Annotations.List {
			if a.Expr == "" {
				continue
			}
			if _, err := run.api.query(run.ctx, substitute(a.Expr, strings.Join(modelServices, "|")), run.now); err != nil {
				t.Errorf("annotation %q: %v", a.Name, err)
			}
		}
	}
}

// exemplarsLinkToTraces: every panel query with exemplars switched on has
// exemplars that carry a trace_id.
func (run *labRun) exemplarsLinkToTraces(t *testing.T) {
	for _, tg := range run.targets {
		if !tg.Exemplar {
			continue
		}
		for _, svc := range serviceValues(tg) {
			expr := substitute(tg.Expr, svc)
			series, err := run.api.exemplars(run.ctx, expr, run.loadStart, run.now)
			if err != nil {
				t.Errorf("%q %s: %v", tg.Panel, tg.RefID, err)
				continue
			}
			n, withTrace := 0, 0
			for _, s := range series {
				for _, e := range s.Exemplars {
					n++
					if len(e.Labels["trace_id"]) == 32 {
						withTrace++
					}
				}
			}
			if withTrace == 0 {
				t.Errorf("%q %s ($service=%s): %d exemplars, none with a trace_id", tg.Panel, tg.RefID, svc, n)
			}
		}
	}
}

// loadRunAnnotations: every load run is marked on the board as a region,
// the way its "Load runs" annotation query selects it.
func (run *labRun) loadRunAnnotations(t *testing.T) {
	// One region per run: a tagged POST at its start, and a PATCH of the
	// id it got back, with timeEnd, at its end.
	calls := run.grafana.recorded()
	ended := map[string]bool{}
	for _, c := range calls {
		if c.Method == http.MethodPatch && c.Body["timeEnd"] != nil {
			ended[c.ID] = true
		}
		if !strings.HasPrefix(c.Auth, "Basic ") {
			t.Errorf("%s annotation %s sent without the credentials of GRAFANA_URL", c.Method, c.ID)
		}
	}
	runs := 0
	for _, c := range calls {
		if c.Method != http.MethodPost {
			continue
		}
		runs++
		if tags, _ := c.Body["tags"].([]any); !slices.Contains(tags, any("loadtest")) {
			t.Errorf("annotation %s: tags %v lack %q, which the board's \"Load runs\" query selects", c.ID, c.Body["tags"], "loadtest")
		}
		if !ended[c.ID] {
			t.Errorf("annotation %s was opened but never closed with timeEnd", c.ID)
		}
	}
	if runs < len(run.services) {
		t.Fatalf("%d load runs marked on the board, want one per service (%d)", runs, len(run.services))
	}
	t.Logf("%d load runs marked, each a region", runs)
}

// serviceValues is what $service takes for a target: one value per service
// for panels repeated over it, else all services at once (the board's
// default, All).
func serviceValues(tg boardTarget) []string {
	if tg.Repeat == "service" {
		return modelServices
	}
	return []string{strings.Join(modelServices, "|")}
}

// substitute replaces the template variables Grafana fills in. The rate
// interval is wider than Grafana's (4 scrapes) so that the whole load run
// stays in the window.
func substitute(expr, service string) string {
	return substituteRate(expr, service, "1m")
}

// substituteRate is substitute with $__rate_interval set to rateInterval.
func substituteRate(expr, service, rateInterval string) string {
	return strings.NewReplacer(
		"$service", service,
		"${service}", service,
		"$__rate_interval", rateInterval,
		"$__interval", "15s",
		"$__range", "5m",
	).Replace(expr)
}
