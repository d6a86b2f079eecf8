//go:build labcheck

package e2e

// The lab's recording rules and alerts after the overload: see TestLab.

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// rulesEvaluate: every rule is healthy and every recording rule recorded
// something.
func (run *labRun) rulesEvaluate(t *testing.T) {
	if run.rulesErr != nil {
		t.Fatal(run.rulesErr)
	}
	if len(run.rules) == 0 {
		t.Fatal("Prometheus loaded no rules")
	}
	for _, r := range run.rules {
		if r.Health != "ok" {
			t.Errorf("rule %s: health %s: %s", r.Name, r.Health, r.LastError)
		}
		if r.Type != "recording" {
			continue
		}
		samples, err := run.api.query(run.ctx, r.Name, run.now)
		if err != nil || len(samples) == 0 {
			t.Errorf("recording rule %s recorded nothing (err %v)", r.Name, err)
		}
	}
}

// starvationSignal: under the same overload the unbounded pool starves and
// the semaphore keeps it from starving; the table of the run is logged.
func (run *labRun) starvationSignal(t *testing.T) {
	window := fmt.Sprintf("%ds", int(run.loadEnd.Sub(run.loadStart).Seconds()))
	at := run.loadEnd.Add(3 * time.Second) // the last scrape of the load
	table := map[string]map[string]float64{}
	columns := []struct{ name, expr string }{
		{"req/s", `sum by (job) (rate(orderlab_http_request_duration_seconds_count{route="/orders"}[%s]))`},
		{"orders/s", `sum by (job) (rate(orderlab_orders_created_total[%s]))`},
		{"429 share", `sum by (job) (rate(orderlab_http_request_duration_seconds_count{route="/orders", code="429"}[%s])) / sum by (job) (rate(orderlab_http_request_duration_seconds_count{route="/orders"}[%s]))`},
		{"p99 latency s", `histogram_quantile(0.99, sum by (job) (rate(orderlab_http_request_duration_seconds{route="/orders"}[%s])))`},
		{"acquire wait p99 s", `histogram_quantile(0.99, sum by (job) (rate(orderlab_db_pool_acquire_wait_seconds[%s])))`},
		{"acquires waited", `sum by (job) (rate(orderlab_db_pool_empty_acquires_total[%s])) / sum by (job) (rate(orderlab_db_pool_acquires_total[%s]))`},
		{"peak goroutines", `max by (job) (max_over_time(go_goroutines[%s]))`},
	}
	for _, c := range columns {
		expr := strings.ReplaceAll(c.expr, "%s", window)
		v, err := run.api.byJob(run.ctx, expr, at)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		table[c.name] = v
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%d clients per service for %s, POST /orders?db_delay=%s, %s:\n", labLoad.clients, labLoad.duration, labLoad.dbDelay, "DB_MAX_CONNS="+labVars["DB_MAX_CONNS"])
	fmt.Fprintf(&sb, "%-20s", "")
	for _, name := range modelServices {
		fmt.Fprintf(&sb, "%12s", name)
	}
	sb.WriteString("\n")
	for _, c := range columns {
		fmt.Fprintf(&sb, "%-20s", c.name)
		for _, name := range modelServices {
			fmt.Fprintf(&sb, "%12.4g", table[c.name][name])
		}
		sb.WriteString("\n")
	}
	t.Log(sb.String())

	unbounded, semaphore := table["acquire wait p99 s"]["unbounded"], table["acquire wait p99 s"]["semaphore"]
	if math.IsNaN(unbounded) || math.IsNaN(semaphore) {
		t.Fatalf("acquire wait p99: unbounded %v, semaphore %v: no acquires recorded", unbounded, semaphore)
	}
	if unbounded < 0.25 {
		t.Errorf("unbounded acquire wait p99 %.3fs: the overload did not starve the pool", unbounded)
	}
	if unbounded < 10*semaphore {
		t.Errorf("unbounded acquire wait p99 %.3fs is not far above semaphore's %.4fs", unbounded, semaphore)
	}
}

// alerts: the overload sets off the alerts it should, for the services it
// should, and PoolStarvation never for semaphore.
func (run *labRun) alerts(t *testing.T) {
	if run.rulesErr != nil {
		t.Fatal(run.rulesErr)
	}
	active := map[string][]string{} // alert -> jobs pending or firing
	for _, r := range run.rules {
		for _, a := range r.Alerts {
			if a.State == "pending" || a.State == "firing" {
				active[r.Name] = append(active[r.Name], a.Labels["job"])
			}
		}
	}
	t.Logf("active alerts (pending: their `for` is longer than the load): %v", active)
	want := map[string]string{"PoolStarvation": "unbounded", "TailLatencyHigh": "unbounded", "RejectionsHigh": "semaphore"}
	for alert, job := range want {
		if !slices.Contains(active[alert], job) {
			t.Errorf("%s is not pending or firing for %s", alert, job)
		}
	}
	if slices.Contains(active["PoolStarvation"], "semaphore") {
		t.Errorf("PoolStarvation for semaphore: the semaphore should keep the pool from starving")
	}
}
