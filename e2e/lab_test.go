package e2e

import (
	"context"
	"debug/buildinfo"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// labKnobs are the services' settings for the overload run: a small pool
// (so overload is cheap to produce on a 2-core machine), the semaphore
// bounded at the pool size, and a pipeline with two workers and a short
// queue. Prometheus scrapes them with the lab's own config.
var labKnobs = map[string][]string{
	"unbounded": nil,
	"semaphore": {"LIMIT=4", "LIMIT_WAIT=50ms"},
	"pipeline":  {"WORKERS=2", "QUEUE_CAPACITY=64", "BATCH_MAX=16", "ENQUEUE_WAIT=10ms"},
}

var labCommon = []string{
	"DB_MAX_CONNS=4",
	"REQUEST_TIMEOUT=10s",
	"SHUTDOWN_TIMEOUT=5s",
	"LOG_LEVEL=warn",
	// Exercise the audit path too: per-order goroutines in unbounded and
	// semaphore, the bounded audit stage in pipeline.
	"AUDIT_DELAY=20ms",
	"OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
	// A tenth of the requests is traced: enough exemplars and spans to find,
	// few enough not to load the 2 cores.
	"OTEL_TRACES_SAMPLER=parentbased_traceidratio",
	"OTEL_TRACES_SAMPLER_ARG=0.1",
}

var labLoad = overload{clients: 100, duration: 15 * time.Second, dbDelay: "50ms"}

// labService is one running concurrency model.
type labService struct {
	name      string
	httpAddr  string
	adminAddr string
}

// TestLab runs the lab without Docker and checks what the board, the rules
// and the traces promise. See the package comment.
func TestLab(t *testing.T) {
	if os.Getenv("ORDERLAB_E2E") == "" {
		t.Skip("end-to-end run of the lab: make e2e (ORDERLAB_E2E=1)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 9*time.Minute)
	defer cancel()

	// 1. Prerequisites. Asked to run, the test fails on anything missing.
	promBin := os.Getenv("PROMETHEUS")
	if promBin == "" {
		promBin = filepath.Join(root, "bin", "prometheus")
	}
	promBin, _ = filepath.Abs(promBin)
	if _, err := os.Stat(promBin); err != nil {
		t.Fatalf("prometheus binary: %v (make bin/prometheus, or set PROMETHEUS)", err)
	}
	project := loadCompose(t)
	checkPrometheusRelease(t, promBin, project.Services["prometheus"].Image)
	adminURL := os.Getenv("TEST_DATABASE_URL")
	if adminURL == "" {
		adminURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	}
	dbURL := createDatabase(t, ctx, adminURL)
	bins := goBuild(t, ctx, "./services/unbounded", "./services/semaphore", "./services/pipeline", "./loadtest")
	boards := loadBoards(t)
	targets := boardTargets(boards)
	otlp := newOTLPReceiver(t)
	grafana := newFakeGrafana(t)
	// With JAEGER set (make e2e-jaeger), spans also go to a real Jaeger
	// running the compose config, and exemplar links are followed into it.
	var jaeger *labJaeger
	if bin := os.Getenv("JAEGER"); bin != "" {
		jaeger = startJaeger(t, project, bin)
		otlp.forward = jaeger.forward
	}

	// 2. The three services, on loopback ports.
	services := map[string]*labService{}
	addrs := map[string]string{}
	for _, name := range modelServices {
		s := &labService{name: name, httpAddr: freeAddr(t), adminAddr: freeAddr(t)}
		env := append(baseEnv(),
			"DATABASE_URL="+dbURL,
			"HTTP_ADDR="+s.httpAddr,
			"ADMIN_ADDR="+s.adminAddr,
			"OTEL_EXPORTER_OTLP_ENDPOINT="+otlp.URL,
			"OTEL_SERVICE_NAME=orderlab-"+name,
		)
		env = append(append(env, labCommon...), labKnobs[name]...)
		p := startProc(t, name, filepath.Join(bins, name), nil, env)
		p.waitHTTP(t, "http://"+s.httpAddr+"/readyz", time.Minute)
		services[name] = s
		addrs[name] = s.adminAddr
	}

	// 3. Prometheus with prometheus/prometheus.yml and its rules, only the
	// targets pointed at the local processes.
	promAddr := freeAddr(t)
	addrs["localhost"] = promAddr
	promDir := t.TempDir()
	cfgPath := writeFile(t, promDir, "prometheus.yml", labPrometheusConfig(t, addrs))
	promFlags := labPrometheusFlags(project)
	args := append([]string{
		"--config.file=" + cfgPath,
		"--storage.tsdb.path=" + filepath.Join(promDir, "data"),
		"--web.listen-address=" + promAddr,
	}, promFlags...)
	prom := startProc(t, "prometheus", promBin, args, baseEnv())
	prom.waitHTTP(t, "http://"+promAddr+"/-/ready", time.Minute)
	api := promAPI{base: "http://" + promAddr, hc: &http.Client{Timeout: 30 * time.Second}}
	waitTargetsUp(t, ctx, api, len(addrs))
	t.Logf("prometheus %s (%s), flags %v", promAddr, promBin, promFlags)

	// 4. The same overload against every service at once.
	loadStart := time.Now()
	var wg sync.WaitGroup
	for _, name := range modelServices {
		wg.Go(func() { runLoad(ctx, t, filepath.Join(bins, "loadtest"), services[name], labLoad, grafana.URL) })
	}
	wg.Wait()
	loadEnd := time.Now()
	if t.Failed() {
		t.FailNow()
	}
	// Two scrapes and a rule evaluation after the load, so that the rates
	// and the recording rules include its end.
	time.Sleep(9 * time.Second)
	now := time.Now()

	t.Run("service variable", func(t *testing.T) {
		got, err := api.labelValues(ctx, "job", "orderlab_service_info")
		if err != nil {
			t.Fatal(err)
		}
		sort.Strings(got)
		want := slices.Sorted(slices.Values(modelServices))
		if !slices.Equal(got, want) {
			t.Errorf("label_values(orderlab_service_info, job) = %v, want %v", got, want)
		}
	})

	t.Run("every panel query returns series", func(t *testing.T) {
		evaluated := 0
		for _, tg := range targets {
			// A query may be NaN for one service (0/0: semaphore's acquires
			// never wait), but one that is NaN for every service draws nothing.
			finite := 0
			for _, svc := range serviceValues(tg) {
				expr := substitute(tg.Expr, svc)
				samples, err := api.query(ctx, expr, now)
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
		t.Logf("%d panel queries evaluated (%d targets)", evaluated, len(targets))
	})

	t.Run("annotation queries", func(t *testing.T) {
		for _, b := range boards {
			for _, a := range b.Annotations.List {
				if a.Expr == "" {
					continue
				}
				if _, err := api.query(ctx, substitute(a.Expr, strings.Join(modelServices, "|")), now); err != nil {
					t.Errorf("annotation %q: %v", a.Name, err)
				}
			}
		}
	})

	t.Run("exemplars link to traces", func(t *testing.T) {
		for _, tg := range targets {
			if !tg.Exemplar {
				continue
			}
			for _, svc := range serviceValues(tg) {
				expr := substitute(tg.Expr, svc)
				series, err := api.exemplars(ctx, expr, loadStart, now)
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
	})

	// One snapshot of the rules, their health and their alerts, for the
	// "rules evaluate" and "alerts" checks.
	rules, rulesErr := api.rules(ctx)
	t.Run("rules evaluate", func(t *testing.T) {
		if rulesErr != nil {
			t.Fatal(rulesErr)
		}
		if len(rules) == 0 {
			t.Fatal("Prometheus loaded no rules")
		}
		for _, r := range rules {
			if r.Health != "ok" {
				t.Errorf("rule %s: health %s: %s", r.Name, r.Health, r.LastError)
			}
			if r.Type != "recording" {
				continue
			}
			samples, err := api.query(ctx, r.Name, now)
			if err != nil || len(samples) == 0 {
				t.Errorf("recording rule %s recorded nothing (err %v)", r.Name, err)
			}
		}
	})

	window := fmt.Sprintf("%ds", int(loadEnd.Sub(loadStart).Seconds()))
	at := loadEnd.Add(3 * time.Second) // the last scrape of the load
	t.Run("starvation signal", func(t *testing.T) {
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
			v, err := api.byJob(ctx, expr, at)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			table[c.name] = v
		}
		var sb strings.Builder
		fmt.Fprintf(&sb, "%d clients per service for %s, POST /orders?db_delay=%s, %s:\n", labLoad.clients, labLoad.duration, labLoad.dbDelay, strings.Join(labCommon[:1], " "))
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
	})

	t.Run("alerts", func(t *testing.T) {
		if rulesErr != nil {
			t.Fatal(rulesErr)
		}
		active := map[string][]string{} // alert -> jobs pending or firing
		for _, r := range rules {
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
	})

	t.Run("traces", func(t *testing.T) {
		want := []struct{ service, child string }{
			{"orderlab-unbounded", "pool.acquire"},
			{"orderlab-semaphore", "limiter.wait"},
			{"orderlab-semaphore", "pool.acquire"},
			{"orderlab-pipeline", "pipeline.enqueue"},
		}
		deadline := time.Now().Add(20 * time.Second)
		for {
			spans := otlp.Spans()
			var missing []string
			for _, w := range want {
				if _, _, ok := childOfServerSpan(spans, w.service, w.child); !ok {
					missing = append(missing, w.service+": "+w.child+" under the HTTP server span")
				}
			}
			batchWithLinks := false
			for _, s := range spans {
				if s.Service == "orderlab-pipeline" && s.Name == "pipeline.batch" && s.Links > 0 {
					batchWithLinks = true
				}
			}
			if !batchWithLinks {
				missing = append(missing, "orderlab-pipeline: pipeline.batch linked to its requests")
			}
			if len(missing) == 0 {
				child, parent, _ := childOfServerSpan(spans, "orderlab-unbounded", "pool.acquire")
				t.Logf("%d spans; e.g. trace %s: %q > %q", len(spans), child.TraceID, parent.Name, child.Name)
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d spans received; missing: %s", len(spans), strings.Join(missing, "; "))
			}
			time.Sleep(time.Second)
		}
	})

	t.Run("exemplar links resolve in Jaeger", func(t *testing.T) {
		if jaeger == nil {
			t.Skip("JAEGER not set: make e2e-jaeger runs a real Jaeger with the compose config")
		}
		if err := otlp.ForwardErr(); err != nil {
			t.Fatalf("forwarding spans to Jaeger: %v", err)
		}
		// The exemplars Grafana shows on the acquire-wait panel for unbounded.
		expr := `histogram_quantile(0.99, sum by (job) (rate(orderlab_db_pool_acquire_wait_seconds{job="unbounded"}[1m])))`
		series, err := api.exemplars(ctx, expr, loadStart, now)
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
			names, err := jaeger.trace(ctx, id)
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
	})

	t.Run("load-run annotations", func(t *testing.T) {
		// One region per run: a tagged POST at its start, and a PATCH of the
		// id it got back, with timeEnd, at its end.
		calls := grafana.recorded()
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
		if runs < len(services) {
			t.Fatalf("%d load runs marked on the board, want one per service (%d)", runs, len(services))
		}
		t.Logf("%d load runs marked, each a region", runs)
	})
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
	return strings.NewReplacer(
		"$service", service,
		"${service}", service,
		"$__rate_interval", "1m",
		"$__interval", "15s",
		"$__range", "5m",
	).Replace(expr)
}

// checkPrometheusRelease makes sure the Prometheus under test is the
// release compose.yaml runs: a `go install` build carries its module version
// (v0.3MM.P for v3.MM.P); Debian's package carries none and is accepted with
// a note.
func checkPrometheusRelease(t *testing.T, bin, image string) {
	t.Helper()
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Logf("prometheus %s: no Go build info (%v); not checking its release", bin, err)
		return
	}
	v := info.Main.Version
	got, ok := prometheusRelease(v)
	if !ok {
		t.Logf("prometheus %s: module version %q; not checking its release", bin, v)
		return
	}
	if got != imageTag(image) {
		t.Fatalf("prometheus under test is %s (%s), compose.yaml runs %s", got, v, image)
	}
	t.Logf("prometheus under test: %s %s, the release of %s", info.Main.Path, v, image)
}

func waitTargetsUp(t *testing.T, ctx context.Context, api promAPI, want int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		targets, err := api.targets(ctx)
		up := 0
		var down []string
		for _, tg := range targets {
			if tg.Health == "up" {
				up++
			} else {
				down = append(down, fmt.Sprintf("%s (%s %s)", tg.ScrapeURL, tg.Health, tg.LastError))
			}
		}
		if err == nil && up == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d targets up (err %v); down: %v", up, want, err, down)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
