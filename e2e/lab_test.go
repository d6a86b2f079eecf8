//go:build labcheck

package e2e

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/types"

	"github.com/orderlab/orderlab/internal/otlptest"
	"github.com/orderlab/orderlab/internal/pgtest"
	"github.com/orderlab/orderlab/internal/proc"
	"github.com/orderlab/orderlab/lab/local"
)

// labRun is the lab after the load, as the checks of TestLab read it (one
// file per concern: lab_panels_test.go, lab_rules_test.go,
// lab_traces_test.go).
type labRun struct {
	ctx      context.Context
	api      promAPI
	boards   map[string]board
	targets  []boardTarget // every panel query of every board
	services map[string]*local.Service
	otlp     *otlptest.Receiver
	jaeger   *labJaeger // nil unless JAEGER is set
	grafana  *fakeGrafana
	proxy    labProxy // the database proxy the services reach Postgres through
	token    string   // the services' ADMIN_TOKEN, as compose gives it

	bins string // the binaries built for the run

	loadStart, loadEnd time.Time
	now                time.Time // when the checks query Prometheus

	// One snapshot of the rules, their health and their alerts, for the
	// "rules evaluate" and "alerts" checks.
	rules    []promRule
	rulesErr error
}

// TestLab runs the lab without Docker and checks what the board, the rules
// and the traces promise. See the package comment.
func TestLab(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	run := startLab(t, ctx)

	// What a user sees after `docker compose up`: the background load
	// alone, then the board.
	t.Run("background load alone: every panel has data", run.backgroundAlone)
	run.overload(t)

	t.Run("service variable", run.serviceVariable)
	t.Run("every panel query returns series", run.panelQueries)
	t.Run("annotation queries", run.annotationQueries)
	t.Run("exemplars link to traces", run.exemplarsLinkToTraces)
	run.rules, run.rulesErr = run.api.rules(ctx)
	t.Run("rules evaluate", run.rulesEvaluate)
	t.Run("starvation signal", run.starvationSignal)
	t.Run("alerts", run.alerts)
	t.Run("traces", run.traces)
	t.Run("exemplar links resolve in Jaeger", run.exemplarLinksResolveInJaeger)
	t.Run("load-run annotations", run.loadRunAnnotations)
	// Last but one, so that the checks above see only the overload.
	t.Run("scenario -lab", run.scenarioLab)
	// Last: it runs a scenario and changes a knob.
	t.Run("front page", run.frontPage)
}

// startLab starts the lab: the database proxy and the services behind it
// (compose's profile dbproxy, with LAB_DATABASE_URL through it), the
// background load the way compose runs it, postgres_exporter, Prometheus, a
// trace receiver, a fake Grafana, and with JAEGER a real Jaeger. Everything
// stops when the test ends.
func startLab(t *testing.T, ctx context.Context) *labRun {
	// 1. Prerequisites. Asked to run, the test fails on anything missing.
	promBin := prometheusBin(t)
	project := loadCompose(t)
	checkPrometheusRelease(t, promBin, project.Services["prometheus"].Image)
	dbURL := pgtest.New(t)
	bins := goBuild(t, ctx, "./services/unbounded", "./services/semaphore", "./services/pipeline", "./loadtest", "./lab")
	run := &labRun{ctx: ctx, bins: bins, boards: loadBoards(t), otlp: otlptest.NewReceiver(t), grafana: newFakeGrafana(t)}
	run.targets = boardTargets(run.boards)
	// With JAEGER set (make e2e-jaeger), spans also go to a real Jaeger
	// running the compose config, and exemplar links are followed into it.
	if bin := os.Getenv("JAEGER"); bin != "" {
		run.jaeger = startJaeger(t, ctx, project, bin)
		run.otlp.ForwardTo(run.jaeger.forward)
	}

	// 2. The three services, on loopback ports, each ready before the next,
	// with compose's environment (the knob token too), reaching Postgres
	// through the database proxy.
	run.token = composeEnv(t, project, "unbounded", "ADMIN_TOKEN")
	var proxied string
	run.proxy, proxied = startDBProxy(t, project, bins, dbURL)
	run.services = map[string]*local.Service{}
	scrape := map[string]string{} // compose service name -> local address
	for _, name := range modelServices {
		s := startService(t, ctx, bins, name, proxied, run.otlp.URL)
		run.services[name] = s
		u, err := url.Parse(s.MetricsURL)
		if err != nil {
			t.Fatal(err)
		}
		scrape[name] = u.Host
	}

	// 3. The background load, as compose.yaml runs it.
	scrape["background"] = startBackground(t, project, bins, run.services)

	// 4. The database's own view, as compose runs it. PgBouncer and its
	// exporter are the pgbouncer profile's, which `docker compose up` does
	// not start: neither does the e2e (make lab-test scrapes them, in the
	// profile's recipe).
	scrape["postgres-exporter"] = startPostgresExporter(t, ctx, project, dbURL)
	scrape["pgbouncer-exporter"] = droppedTarget

	// 5. Prometheus with prometheus/prometheus.yml and its rules, only the
	// targets pointed at the local processes.
	run.api = startPrometheus(t, ctx, project, promBin, scrape)
	return run
}

// overload runs the same overload against every service at once, the
// background load still running as it does in the lab, and returns once
// Prometheus has seen the load's end.
func (run *labRun) overload(t *testing.T) {
	run.loadStart = time.Now()
	var wg sync.WaitGroup
	for _, name := range modelServices {
		wg.Go(func() {
			runLoad(run.ctx, t, filepath.Join(run.bins, "loadtest"), run.services[name], labLoad, run.grafana.URL)
		})
	}
	wg.Wait()
	run.loadEnd = time.Now()
	if t.Failed() {
		t.FailNow()
	}
	// Two scrapes of every target after the load, then a rule evaluation
	// after those, so that the rates and the recording rules include its
	// end.
	waitScrapedSince(t, run.ctx, run.api, run.loadEnd)
	waitEvaluatedSince(t, run.ctx, run.api, time.Now())
	run.now = time.Now()
}

// startService starts one model from bins with compose's environment
// (labServiceEnv), exporting spans to otlpURL, the way the scenario runner
// starts it (lab/local); it stops when the test ends.
func startService(t *testing.T, ctx context.Context, bins, name, dbURL, otlpURL string) *local.Service {
	t.Helper()
	env := labServiceEnv(t, name, otlpURL)
	if v, ok := os.LookupEnv("GOMAXPROCS"); ok { // as for every process of the run
		env["GOMAXPROCS"] = v
	}
	logDir := t.TempDir()
	logOnFailure(t, name, filepath.Join(logDir, name+".log"))
	l, err := local.Start(ctx, local.Config{BinDir: bins, Services: []string{name}, Env: env,
		Database: dbURL, LogDir: logDir, Ready: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Stop(); err != nil {
			t.Logf("stopping %s: %v", name, err)
		}
	})
	return l.Services[0]
}

// startPrometheus runs promBin with prometheus/prometheus.yml, its targets
// rewritten to scrape (plus Prometheus itself), and the compose service's
// flags; it returns once every target is up.
func startPrometheus(t *testing.T, ctx context.Context, project *types.Project, promBin string, scrape map[string]string) promAPI {
	t.Helper()
	addrs, err := proc.LoopbackAddrs(1)
	if err != nil {
		t.Fatal(err)
	}
	promAddr := addrs[0]
	scrape["localhost"] = promAddr
	promDir := t.TempDir()
	cfgPath := writeFile(t, promDir, "prometheus.yml", labPrometheusConfig(t, scrape))
	promFlags := labPrometheusFlags(project)
	args := append([]string{
		"--config.file=" + cfgPath,
		"--storage.tsdb.path=" + filepath.Join(promDir, "data"),
		"--web.listen-address=" + promAddr,
	}, promFlags...)
	prom := startProc(t, "prometheus", promBin, args, proc.BaseEnv("GOMAXPROCS"))
	if err := prom.WaitReady(ctx, "http://"+promAddr+"/-/ready", time.Minute); err != nil {
		t.Fatal(err)
	}
	api := promAPI{base: "http://" + promAddr, hc: &http.Client{Timeout: 30 * time.Second}}
	up := 0
	for _, addr := range scrape {
		if addr != droppedTarget {
			up++
		}
	}
	waitTargetsUp(t, ctx, api, up)
	t.Logf("prometheus %s (%s), flags %v", promAddr, promBin, promFlags)
	return api
}
