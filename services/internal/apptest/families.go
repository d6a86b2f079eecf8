package apptest

import (
	"net/http"
	"os/exec"
	"testing"

	"github.com/orderlab/orderlab/services/internal/httpserver"
)

// SharedFamilies are the metric families every service exposes.
var SharedFamilies = []string{
	"orderlab_service_info",
	"orderlab_orders_created_total",
	"orderlab_http_request_duration_seconds",
	"orderlab_http_requests_in_flight",
	"orderlab_http_connections",
	"orderlab_db_pool_acquired_connections",
	"orderlab_db_pool_idle_connections",
	"orderlab_db_pool_constructing_connections",
	"orderlab_db_pool_total_connections",
	"orderlab_db_pool_max_connections",
	"orderlab_db_pool_acquires_total",
	"orderlab_db_pool_empty_acquires_total",
	"orderlab_db_pool_canceled_acquires_total",
	"orderlab_db_pool_acquire_duration_seconds_total",
	"orderlab_db_pool_empty_acquire_wait_seconds_total",
	"orderlab_db_pool_acquire_wait_seconds",
	"orderlab_db_pool_connection_hold_seconds",
	"orderlab_db_pool_acquires_in_progress",
	"orderlab_db_pool_longest_hold_seconds",
	"orderlab_db_errors_total",
	"orderlab_db_retries_total",
	"go_goroutines",
	"go_threads",
	"go_gc_gomemlimit_bytes",
	"process_resident_memory_bytes",
}

// ModelFamilies are the families only one model exposes.
var ModelFamilies = map[string][]string{
	"semaphore": {
		"orderlab_limiter_limit", "orderlab_limiter_permits_in_use", "orderlab_limiter_waiters",
		"orderlab_limiter_wait_seconds", "orderlab_limiter_rejections_total",
	},
	"pipeline": {
		"orderlab_pipeline_queue_length", "orderlab_pipeline_queue_capacity", "orderlab_pipeline_workers",
		"orderlab_pipeline_workers_busy", "orderlab_pipeline_enqueue_wait_seconds", "orderlab_pipeline_rejections_total",
		"orderlab_pipeline_batch_size", "orderlab_pipeline_batch_commit_seconds",
	},
}

// NBIOFamilies are the families only the nbio server exposes: its handler pool.
var NBIOFamilies = []string{
	"orderlab_http_handler_pool_size", "orderlab_http_handler_pool_busy",
	"orderlab_http_handler_pool_queued", "orderlab_http_handler_pool_wait_seconds",
}

func metricsFamilies(t *testing.T, inst *Instance, modelName, server string) {
	// One request of each kind so that the labelled families have series.
	inst.MustDo("GET", "/work/db?delay=1ms", "", nil, nil)
	fams := inst.Metrics()
	want := append(append([]string{}, SharedFamilies...), ModelFamilies[modelName]...)
	for _, name := range want {
		if _, ok := fams[name]; !ok {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	for _, name := range NBIOFamilies {
		if _, ok := fams[name]; ok != (server == string(httpserver.NBIO)) {
			t.Errorf("HTTP_SERVER=%s: /metrics has %s: %v", server, name, ok)
		}
	}
	if v := fams.Value("orderlab_service_info", map[string]string{"http_server": server}); v != 1 {
		t.Errorf("orderlab_service_info{http_server=%q} = %v, want 1", server, v)
	}
	// This scrape's client holds no API connection; the suite's client
	// keeps its connections alive between requests: all idle now.
	if open := fams.Value("orderlab_http_connections", nil); open < 1 {
		t.Errorf("orderlab_http_connections = %v, want the suite's kept-alive connections", open)
	}
	for other, names := range ModelFamilies {
		if other == modelName {
			continue
		}
		for _, name := range names {
			if _, ok := fams[name]; ok {
				t.Errorf("%s exposes %s, a %s metric", modelName, name, other)
			}
		}
	}
	if v := fams.Value("orderlab_service_info", map[string]string{"model": modelName}); v != 1 {
		t.Errorf("orderlab_service_info{model=%q} = %v, want 1", modelName, v)
	}
	if c := fams.Count("orderlab_http_request_duration_seconds", map[string]string{"route": "/work/db", "code": "200", "method": "GET"}); c == 0 {
		t.Errorf("no /work/db observation in the request histogram")
	}
	// Invented methods share one label value: the label stays bounded.
	// nbio's parser knows the nine standard methods only: it closes the
	// connection on any other without an answer (docs/reference/http-servers.md).
	for _, m := range []string{"FOO", "BAR"} {
		_, err := inst.Do(m, "/orders", "", nil, nil)
		if nbio := server == string(httpserver.NBIO); nbio != (err != nil) {
			t.Errorf("%s /orders with HTTP_SERVER=%s: error %v", m, server, err)
		}
	}
	fams = inst.Metrics()
	for _, m := range fams["orderlab_http_request_duration_seconds"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "method" && (l.GetValue() == "FOO" || l.GetValue() == "BAR") {
				t.Errorf("raw method %q became a label value", l.GetValue())
			}
		}
	}
	wantOther := uint64(2)
	if server == string(httpserver.NBIO) {
		wantOther = 0
	}
	if c := fams.Count("orderlab_http_request_duration_seconds", map[string]string{"method": "OTHER"}); c != wantOther {
		t.Errorf("requests with method=OTHER = %d, want %d", c, wantOther)
	}
	if v := fams.Value("orderlab_db_pool_max_connections", nil); v != 4 {
		t.Errorf("pool max connections = %v, want 4 (DB_MAX_CONNS)", v)
	}

	// promtool's linter over the real exposition.
	promtool := PromtoolPath(t)
	resp, err := http.Get(inst.AdminURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = resp.Body
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}
