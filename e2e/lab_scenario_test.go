//go:build labcheck

package e2e

// `lab scenario -lab` in the lab as compose starts it: pool-starvation
// (at a size the e2e can afford) and db-latency (-quick, through the
// database proxy) set up through the services' knob API, annotated on the
// (fake) board, seen in Prometheus, and every knob put back. See TestLab.

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/types"
	"github.com/goccy/go-yaml"

	"github.com/orderlab/orderlab/internal/proc"
	"github.com/orderlab/orderlab/lab/dbproxy"
	"github.com/orderlab/orderlab/lab/knobs"
	"github.com/orderlab/orderlab/lab/scenario"
	"github.com/orderlab/orderlab/lab/scenario/catalog"
)

// labProxy is the lab's database proxy (compose profile dbproxy) as the e2e
// runs it: the services' DATABASE_URL goes through it, as LAB_DATABASE_URL
// sends them through it in compose.
type labProxy struct {
	control string // its control API
	addr    string // host:port the services reach Postgres by
}

// startDBProxy runs the compose service "dbproxy" from bins: its command as
// compose.yaml gives it, with the listener and the control API on free
// loopback ports and the upstream at dbURL's server. It returns the proxy
// and dbURL through it. It stops when the test ends.
func startDBProxy(t *testing.T, project *types.Project, bins, dbURL string) (labProxy, string) {
	t.Helper()
	svc, ok := project.Services["dbproxy"]
	if !ok || !runsLabImage(project, svc) {
		t.Fatal("compose.yaml: want a dbproxy service of the lab's image (build arg SERVICE=lab)")
	}
	addrs, err := proc.LoopbackAddrs(2)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	seen := map[string]bool{}
	for _, arg := range svc.Command {
		flag, _, _ := strings.Cut(arg, "=")
		switch flag {
		case "-listen":
			arg = "-listen=" + addrs[0]
		case "-upstream":
			arg = "-upstream=" + u.Host
		case "-control":
			arg = "-control=" + addrs[1]
		case "dbproxy":
		default:
			t.Fatalf("compose.yaml: dbproxy's command has %q, which the e2e does not know", arg)
		}
		seen[flag] = true
		args = append(args, arg)
	}
	if len(seen) != 4 || args[0] != "dbproxy" {
		t.Fatalf("compose.yaml: dbproxy's command %v: want dbproxy -listen= -upstream= -control=", svc.Command)
	}
	env := proc.BaseEnv()
	for k, v := range svc.Environment {
		if v != nil {
			env = append(env, k+"="+*v)
		}
	}
	p := startProc(t, "dbproxy", filepath.Join(bins, "lab"), args, env)
	px := labProxy{control: "http://" + addrs[1], addr: addrs[0]}
	if err := p.WaitReady(t.Context(), px.control+"/healthz", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	u.Host = addrs[0]
	return px, u.String()
}

// composeEnv is the value compose gives key on service name.
func composeEnv(t *testing.T, project *types.Project, name, key string) string {
	t.Helper()
	v := project.Services[name].Environment[key]
	if v == nil || *v == "" {
		t.Fatalf("compose.yaml: %s has no %s", name, key)
	}
	return *v
}

// smallStarvation is the catalog's pool-starvation at a size the e2e can
// afford, with the same shape: 60 clients for 3 s against a pool of 2 held
// 50 ms per order (40 orders/s) and a 1 s deadline, so that the queue in
// front of the pool (60 / 40 per s = 1.5 s) outlasts the deadline as the
// catalog's (2,000 / 400 per s = 5 s against 2 s) does; the semaphore's
// LIMIT of 2 sheds 429s; the pipeline's 2 workers take batches of 4, so
// orders wait in its queue. Quick mode keeps 50 clients and a pool of 5,
// whose queue (0.5 s) never reaches the 2 s deadline.
const (
	smallPool     = 2
	smallDeadline = time.Second
)

func smallStarvation(t *testing.T) string {
	t.Helper()
	s, err := catalog.Get("pool-starvation")
	if err != nil {
		t.Fatal(err)
	}
	maps.Copy(s.Env, map[string]string{
		"DB_MAX_CONNS": fmt.Sprint(smallPool), "LIMIT": fmt.Sprint(smallPool), "WORKERS": fmt.Sprint(smallPool),
		"BATCH_MAX": "4", "REQUEST_TIMEOUT": smallDeadline.String(),
	})
	s.Title = fmt.Sprintf("the e2e's size: 60 clients POST orders that hold a connection 50 ms, pool %d", smallPool)
	// The first phase only: the harsher profile after it would add a
	// minute of 3,000 clients to the e2e and check nothing more here.
	s.Phases = s.Phases[:1]
	s.Expect = slices.DeleteFunc(s.Expect, func(e scenario.Expectation) bool { return e.Phase != "" && e.Phase != s.Phases[0].Name })
	p := &s.Phases[0]
	load := *p.Load
	load.Concurrency, load.Duration = 60, scenario.Duration(3*time.Second)
	p.Load = &load
	bound := *p.Bound
	bound.Concurrency, bound.What = smallPool, fmt.Sprintf("pool %d / 50 ms", smallPool)
	p.Bound, p.Note = &bound, "The e2e's size of the scenario (e2e/lab_scenario_test.go)."
	out, err := yaml.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return writeFile(t, t.TempDir(), "pool-starvation.yaml", out)
}

// phaseWindow is a phase as its annotation on the board spans it.
type phaseWindow struct{ from, to time.Time }

// rangeSel is the window as a PromQL range selector, ending at to.
func (w phaseWindow) rangeSel() string { return fmt.Sprintf("[%dms]", w.to.Sub(w.from).Milliseconds()) }

// scenarioLab runs `lab scenario -lab` against the lab, as a user
// does from the host with the lab's ports moved to the e2e's (-target,
// -metrics, -dbproxy), and checks what it promises.
func (run *labRun) scenarioLab(t *testing.T) {
	ctx := run.ctx
	clients := map[string]*knobs.Client{}
	before := map[string]map[string]string{}
	for _, name := range modelServices {
		clients[name] = &knobs.Client{Admin: strings.TrimSuffix(run.services[name].MetricsURL, "/metrics"), Token: run.token}
		k, err := clients[name].Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		before[name] = k
	}
	marks := len(run.grafana.recorded())
	outDir := t.TempDir()
	scenarioCmd := func(extra ...string) string {
		args := []string{"scenario", "-lab", "-out", outDir, "-pause", "500ms",
			"-dbproxy", run.proxy.control, "-dbproxy-host", run.proxy.addr}
		for _, name := range modelServices {
			s := run.services[name]
			args = append(args, "-target", name+"="+s.URL, "-metrics", name+"="+s.MetricsURL)
		}
		args = append(args, extra...)
		cmd := exec.CommandContext(ctx, filepath.Join(run.bins, "lab"), args...)
		cmd.Env = append(proc.BaseEnv("GOMAXPROCS"), "GRAFANA_URL="+run.grafana.URL, "ADMIN_TOKEN="+run.token)
		out, err := cmd.CombinedOutput()
		t.Logf("lab %s:\n%s", strings.Join(args, " "), out)
		// Exit 1 is a missed expectation of a run that finished: the
		// verdicts are checked below.
		if exit := (*exec.ExitError)(nil); err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
			t.Fatalf("lab scenario: %v", err)
		}
		return string(out)
	}
	small := smallStarvation(t)
	outputs := map[string]string{
		"pool-starvation": scenarioCmd(small),
		"db-latency":      scenarioCmd("-quick", "db-latency"),
	}
	// Two scrapes after the last phase's end.
	waitScrapedSince(t, run.ctx, run.api, time.Now())

	t.Run("verdicts and the board's URL", func(t *testing.T) {
		for name, out := range outputs {
			s, err := catalog.Get(name)
			if name == "pool-starvation" { // the e2e's own size of it
				var data []byte
				if data, err = os.ReadFile(small); err == nil {
					s, err = scenario.Parse(data)
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			verdicts := 0
			for _, l := range strings.Split(out, "\n") {
				for _, v := range []string{"MET ", "MISSED ", "READ ", "NO RUN ", "NOT JUDGED "} {
					if strings.HasPrefix(strings.TrimLeft(l, "- "), v) {
						verdicts++
					}
				}
			}
			if verdicts < len(s.Expect) || !strings.Contains(out, "board: http://127.0.0.1:3000/d/orderlab-pool-starvation?from=") {
				t.Errorf("%s: %d verdict lines (want one per expectation, %d), board URL printed: %v", name, verdicts, len(s.Expect),
					strings.Contains(out, "board: "))
			}
		}
	})

	windows := map[string]map[string]phaseWindow{} // scenario -> phase -> window
	t.Run("annotations", func(t *testing.T) {
		calls := run.grafana.recorded()[marks:]
		ends := map[string]map[string]any{}
		for _, c := range calls {
			if c.Method == "PATCH" {
				ends[c.ID] = c.Body
			}
		}
		for _, c := range calls {
			if c.Method != "POST" {
				continue
			}
			tags := fmt.Sprint(c.Body["tags"])
			text := fmt.Sprint(c.Body["text"])
			for _, name := range []string{"pool-starvation", "db-latency"} {
				if !strings.Contains(tags, " "+name+"]") || !strings.Contains(tags, " scenario ") {
					continue
				}
				_, phase, ok := strings.Cut(text, ", phase ")
				phase, _, _ = strings.Cut(phase, ":")
				end, closed := ends[c.ID]
				if !ok || !closed {
					t.Errorf("annotation %s %q (tags %s): want a phase, and a PATCH with its end", c.ID, text, tags)
					continue
				}
				if windows[name] == nil {
					windows[name] = map[string]phaseWindow{}
				}
				windows[name][phase] = phaseWindow{millis(c.Body["time"]), millis(end["timeEnd"])}
			}
		}
		for name, want := range map[string][]string{"pool-starvation": {"orders"}, "db-latency": {"latency-0ms", "latency-20ms", "latency-0ms-again"}} {
			if got := slices.Sorted(maps.Keys(windows[name])); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
				t.Errorf("%s: annotated phases %v, want %v (tags loadtest, scenario, %s)", name, got, want, name)
			}
		}
		if t.Failed() {
			t.Logf("recorded: %+v", calls)
		}
	})
	starved, ok := windows["pool-starvation"]["orders"]
	if !ok {
		t.Fatal("no window for pool-starvation's phase: cannot read Prometheus")
	}

	// value evaluates expr at the end of window w, by job.
	value := func(t *testing.T, expr string, w phaseWindow) map[string]float64 {
		t.Helper()
		v, err := run.api.byJob(ctx, strings.ReplaceAll(expr, "[W]", w.rangeSel()), w.to)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	// held checks that every series of the gauge sel stood at want on each
	// job named during the whole window (range selectors only: a subquery
	// would also see the sample before the window, taken before the knob
	// changed).
	held := func(t *testing.T, sel string, w phaseWindow, want float64, jobs ...string) {
		t.Helper()
		lo := value(t, "min by (job) (min_over_time("+sel+"[W]))", w)
		hi := value(t, "max by (job) (max_over_time("+sel+"[W]))", w)
		for _, j := range jobs {
			if lo[j] != want || hi[j] != want {
				t.Errorf("%s on %s during the phase: %v..%v, want %v", sel, j, lo[j], hi[j], want)
			}
		}
	}

	t.Run("pool-starvation: the knobs were applied", func(t *testing.T) {
		held(t, `orderlab_knob_value{knob="DB_MAX_CONNS"}`, starved, smallPool, modelServices...)
		held(t, `orderlab_knob_value{knob="REQUEST_TIMEOUT"}`, starved, smallDeadline.Seconds(), modelServices...)
		held(t, `orderlab_db_pool_max_connections`, starved, smallPool, modelServices...)
		held(t, `orderlab_limiter_limit`, starved, smallPool, "semaphore")
		held(t, `orderlab_knob_value{knob="WORKERS"}`, starved, smallPool, "pipeline")
	})
	t.Run("pool-starvation: the signature", func(t *testing.T) {
		deadline := smallDeadline.Seconds()
		p99 := value(t, `histogram_quantile(0.99, sum by (job) (rate(orderlab_db_pool_acquire_wait_seconds[W])))`, starved)
		if v := p99["unbounded"]; !(v >= 0.7*deadline && v <= 1.5*deadline) {
			t.Errorf("unbounded's acquire-wait p99 %.3f s, want near its %.0f s deadline", v, deadline)
		}
		status := func(job, code string) float64 {
			v := value(t, `sum by (job) (increase(orderlab_http_request_duration_seconds_count{route="/orders",code="`+code+`"}[W]))`, starved)
			return v[job]
		}
		if n := status("unbounded", "503"); !(n > 0) {
			t.Errorf("unbounded: %v orders answered 503, want the deadline's 503s", n)
		}
		if n := status("semaphore", "429"); !(n > 0) {
			t.Errorf("semaphore: %v orders answered 429, want the limit's 429s", n)
		}
		if q := value(t, `max_over_time(orderlab_pipeline_queue_length[W])`, starved)["pipeline"]; !(q > 0) {
			t.Errorf("pipeline: queue length at most %v during the phase, want orders waiting in it", q)
		}
	})
	t.Run("db-latency: the knobs and the proxy's latency", func(t *testing.T) {
		w := windows["db-latency"]
		base, slow, again := w["latency-0ms"], w["latency-20ms"], w["latency-0ms-again"]
		if base.to.IsZero() || slow.to.IsZero() || again.to.IsZero() {
			t.Fatal("no window for db-latency's phases")
		}
		held(t, `orderlab_knob_value{knob="DB_MAX_CONNS"}`, slow, 5, modelServices...)
		hold := `sum by (job) (increase(orderlab_db_pool_connection_hold_seconds_sum[W])) / sum by (job) (increase(orderlab_db_pool_connection_hold_seconds_count[W]))`
		h0, h20, h0again := value(t, hold, base), value(t, hold, slow), value(t, hold, again)
		for _, j := range modelServices {
			// The first phase's hold also carries the time its orders waited
			// for a core while the lab's other scenarios and tests ran (26.9 ms
			// for a 10 ms query in one CI run): the latency must show against
			// the quicker of the two phases without it.
			quick := min(h0[j], h0again[j])
			if !(h20[j]-quick >= 0.015) || math.IsNaN(quick) {
				t.Errorf("%s: mean connection hold %.1f and %.1f ms without, %.1f ms with 20 ms per round trip: want at least 15 ms more than the quicker",
					j, 1000*h0[j], 1000*h0again[j], 1000*h20[j])
			}
		}
		if f, err := (&dbproxy.Client{URL: run.proxy.control}).Get(ctx); err != nil || f.Fault != "none" {
			t.Errorf("the proxy after the run: %+v, %v; want none", f, err)
		}
	})
	t.Run("every knob is back", func(t *testing.T) {
		for _, name := range modelServices {
			after, err := clients[name].Get(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(before[name], after) {
				for k, v := range before[name] {
					if after[k] != v {
						t.Errorf("%s: %s = %q after the runs, %q before", name, k, after[k], v)
					}
				}
			}
		}
	})
	if t.Failed() {
		files, _ := filepath.Glob(filepath.Join(outDir, "*", "*.md"))
		for _, f := range files {
			b, _ := os.ReadFile(f)
			t.Logf("--- %s ---\n%s", f, b)
		}
	}
}

// millis reads an annotation's time (JSON number, milliseconds).
func millis(v any) time.Time {
	f, _ := v.(float64)
	return time.UnixMilli(int64(f))
}
