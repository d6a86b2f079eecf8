//go:build labcheck

package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/orderlab/orderlab/internal/proc"
	"github.com/orderlab/orderlab/lab/knobs"
	"github.com/orderlab/orderlab/lab/scenario/catalog"
)

// frontShots, when set, is the directory the front page's screenshots are
// saved to (make front-pictures: docs/img); otherwise a temporary one.
const frontShots = "FRONT_SHOTS"

// frontPage runs `lab front` against the lab's services, Prometheus,
// background load and (fake) Grafana, as compose runs it, and drives it in
// headless Chromium as a user would: the catalog lists every scenario, a
// quick pool-starvation run shows its phase, is still running after a
// reload, and ends with its verdict table and the report's link; a knob
// edited in the form shows in the service's GET /knobs, and an invalid
// value shows the service's refusal and changes nothing.
func (run *labRun) frontPage(t *testing.T) {
	token := run.token
	addrs, err := proc.LoopbackAddrs(1)
	if err != nil {
		t.Fatal(err)
	}
	page := "http://" + addrs[0]
	args := []string{"front", "-listen=" + addrs[0], "-prometheus=" + run.api.base, "-out=" + t.TempDir(), "-keep=3",
		"-grafana=" + run.grafana.URL, "-background=" + run.backgroundURL(t)}
	for _, name := range modelServices {
		s := run.services[name]
		args = append(args, "-target="+name+"="+s.URL, "-metrics="+name+"="+s.MetricsURL)
	}
	env := append(proc.BaseEnv("GOMAXPROCS"), "GRAFANA_URL="+run.grafana.URL, "ADMIN_TOKEN="+token)
	p := startProc(t, "front", filepath.Join(run.bins, "lab"), args, env)
	if err := p.WaitReady(run.ctx, page+"/api/config", 30*time.Second); err != nil {
		t.Fatal(err)
	}

	exe := os.Getenv("CHROMIUM")
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if exe == "" {
			exe, _ = exec.LookPath(name)
		}
	}
	if exe == "" {
		t.Fatal("headless Chromium is needed for the front page's test: apt-get install -y chromium, or set CHROMIUM")
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(run.ctx, chromedp.ExecPath(exe), chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true), chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 800))
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 6*time.Minute)
	defer cancelT()
	shots := os.Getenv(frontShots)
	if shots == "" {
		shots = t.TempDir()
	}
	// A screenshot of the window (1280x800) from the top of sel.
	shot := func(name, sel string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.ScrollIntoView(chromedp.CSS(sel)), chromedp.Sleep(300*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(shots, name), png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot %s (%d bytes)", filepath.Join(shots, name), len(png))
	}
	wait := func(what, js string, within time.Duration) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(within), chromedp.WithPollingInterval(100*time.Millisecond))); err != nil {
			text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#status").textContent + " | " + document.querySelector("#run").innerText`))
			t.Fatalf("waited %s for %s: %v; the page says: %s", within, what, err, text)
		}
	}

	// The catalog: every scenario, with its number.
	all, err := catalog.All()
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(page+"/")); err != nil {
		t.Fatal(err)
	}
	wait("the catalog", fmt.Sprintf(`document.querySelectorAll("#scenarios li.scenario").length === %d`, len(all)), 20*time.Second)
	names, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#scenarios li.scenario h3")].map(h => h.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range all {
		if want := fmt.Sprintf("%d %s", s.Number, s.Name); i >= len(names) || names[i] != want {
			t.Errorf("catalog entry %d: %q, want %q", i, names[i], want)
		}
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#kinds button[data-kind="pool"]`))); err != nil {
		t.Fatal(err)
	}
	wait("the pool filter", `[...document.querySelectorAll("#scenarios li.scenario")].every(li => li.dataset.kind === "pool")`, 5*time.Second)
	shot("front-catalog.png", "#catalog")

	// A quick pool-starvation run: the phase shows, a reload finds it still running.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`button.run[data-name="pool-starvation"]`))); err != nil {
		t.Fatal(err)
	}
	wait("the run's phase", `document.querySelector("#run-phase").dataset.phase === "orders" && document.querySelector("#run-state").dataset.state === "running"`, 30*time.Second)
	if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	wait("the run, still running after a reload", `document.querySelector("#run-state").dataset.state === "running"`, 10*time.Second)
	wait("the live charts", `document.querySelectorAll("#charts .chart canvas").length >= 12`, 15*time.Second)
	// Each chart marks the run's start and each phase's, by name.
	wait("a mark at the run's start and at its first phase's", `(() => {
	  const o = echarts.getInstanceByDom(document.querySelector("#charts .chart")).getOption();
	  const names = ((o.series[0] || {}).markLine || {data: []}).data.map((d) => d.label && d.label.formatter);
	  return names[0] === "run" && names[1] === "orders";
	})()`, 15*time.Second)
	// The picture of a run in progress shows some of its own load: the
	// charts reach 8 s past the phase's mark (they begin 30 s before the run).
	wait("8 s of the phase on the charts", `(() => {
	  const o = echarts.getInstanceByDom(document.querySelector("#charts .chart")).getOption();
	  const d = ((o.series[0] || {}).markLine || {data: []}).data;
	  return d.length > 1 && o.xAxis[0].max - d[1].xAxis >= 8000;
	})()`, 30*time.Second)
	shot("front-run.png", "#run-view")

	// The verdict table, then the report the link opens.
	wait("the verdicts", `!document.querySelector("#result").hidden && document.querySelectorAll("#verdicts tbody tr").length >= 3`, 90*time.Second)
	state, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#run-state")))
	verdicts, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#verdicts")))
	t.Logf("run %s; verdicts:\n%s", state, verdicts)
	if state != "finished" || !strings.Contains(verdicts, "semaphore") || !strings.Contains(verdicts, "p99<500ms") ||
		!strings.Contains(verdicts, "busy with transactions that committed") || !strings.Contains(verdicts, "of the nominal 100/s bound") {
		t.Errorf("run %q, verdicts %q: want it finished with the semaphore's p99<500ms, its pool use, and its commits against the quick pool's nominal 100/s bound", state, verdicts)
	}
	wait("the verdict picture", `document.querySelectorAll("#verdict-chart canvas").length === 1 && document.querySelector("#conclusion").textContent !== ""`, 5*time.Second)
	shot("front-verdict.png", "#result")
	href, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#report-html").href`))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(href)); err != nil {
		t.Fatal(err)
	}
	title, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.title + " " + document.body.innerText.slice(0, 200)`))
	if err != nil || !strings.Contains(title, "pool-starvation") {
		t.Errorf("the report link %s opens %q (%v), want the run's report", href, title, err)
	}

	// The page opened afresh shows the run that ended on top, with its
	// verdict: committed/s as a multiple of the bound on a log scale, the
	// bound at 1 ×.
	if err := chromedp.Do(ctx, chromedp.Navigate(page+"/")); err != nil {
		t.Fatal(err)
	}
	wait("the last run's verdict on top", `document.querySelector("#run-none").hidden && !document.querySelector("#result").hidden &&
	  document.querySelector("#run-title").textContent.includes("pool-starvation") && document.querySelector("#conclusion").textContent !== "" &&
	  document.querySelectorAll("#verdict-chart canvas").length === 1 && (() => {
	    const o = echarts.getInstanceByDom(document.querySelector("#verdict-chart")).getOption();
	    return o.xAxis[0].type === "log" && o.series[0].markLine.data[0].xAxis === 1;
	  })()`, 10*time.Second)

	// A second scenario, of another kind, from the catalog: its verdict
	// picture draws its phases and models too.
	wait("the catalog again", `document.querySelector('button.run[data-name="backpressure-void"]') !== null`, 20*time.Second)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`button.run[data-name="backpressure-void"]`))); err != nil {
		t.Fatal(err)
	}
	wait("backpressure-void's verdict picture", `document.querySelector("#run-title").textContent.includes("backpressure-void") &&
	  document.querySelector("#run-state").dataset.state === "done" && document.querySelectorAll("#verdict-chart canvas").length === 1 &&
	  echarts.getInstanceByDom(document.querySelector("#verdict-chart")).getOption().series.length > 0 &&
	  document.querySelector("#conclusion").textContent !== ""`, 90*time.Second)

	// A knob edited in the form shows in GET /knobs; an invalid one is
	// refused with the service's reason and changes nothing.
	kc := &knobs.Client{Admin: strings.TrimSuffix(run.services["semaphore"].MetricsURL, "/metrics"), Token: token}
	defer func() {
		if _, err := kc.Patch(context.WithoutCancel(run.ctx), map[string]string{"LIMIT_WAIT": ""}); err != nil {
			t.Errorf("putting LIMIT_WAIT back as the service started: %v", err)
		}
	}()
	input := chromedp.CSS(`#knob-semaphore-LIMIT_WAIT`)
	apply := chromedp.CSS(`form[data-service="semaphore"] button[type=submit]`)
	if err := chromedp.Do(ctx, chromedp.Navigate(page+"/#knobs"), chromedp.WaitVisible(input),
		chromedp.SetValue(input, "70ms"), chromedp.Click(apply)); err != nil {
		t.Fatal(err)
	}
	wait("the change applied", `document.querySelector("#knob-msg-semaphore").textContent.startsWith("Applied")`, 10*time.Second)
	if got, err := kc.Get(run.ctx); err != nil || got["LIMIT_WAIT"] != "70ms" {
		t.Errorf("semaphore's LIMIT_WAIT after the form: %q (%v), want 70ms", got["LIMIT_WAIT"], err)
	}
	if err := chromedp.Do(ctx, chromedp.SetValue(input, "soon"), chromedp.Click(apply)); err != nil {
		t.Fatal(err)
	}
	wait("the refusal", `document.querySelector("#knob-msg-semaphore").textContent.startsWith("Refused")`, 10*time.Second)
	refused, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#knob-msg-semaphore")))
	if !strings.Contains(refused, "LIMIT_WAIT") || !strings.Contains(refused, "nothing was changed") {
		t.Errorf("the refusal reads %q, want the service's reason naming LIMIT_WAIT", refused)
	}
	if got, err := kc.Get(run.ctx); err != nil || got["LIMIT_WAIT"] != "70ms" {
		t.Errorf("semaphore's LIMIT_WAIT after a refused value: %q (%v), want 70ms still", got["LIMIT_WAIT"], err)
	}

	// What the lab sees, and a mystery run, answered and revealed.
	mysteryOnPage(t, ctx, page, shot, wait)

	// At phone width nothing is wider than the screen.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844), chromedp.Navigate(page+"/")); err != nil {
		t.Fatal(err)
	}
	// The mystery's reveal is shown again: its load line is the longest line the page has.
	wait("the catalog and the mystery's reveal at phone width", `document.querySelectorAll("#scenarios li.scenario").length > 0 &&
	  !document.querySelector("#mystery-reveal").hidden && document.querySelector("#mystery-reveal").textContent.includes("Load: ")`, 20*time.Second)
	if w, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); err != nil || w > 400 {
		// Name what sticks out: the deepest elements wider than the screen.
		wide, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("body *")]
		  .filter((e) => e.getBoundingClientRect().right > 392 && ![...e.children].some((c) => c.getBoundingClientRect().right > 392))
		  .slice(0, 8).map((e) => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + " " + Math.round(e.getBoundingClientRect().right) + " px: " + e.textContent.slice(0, 80))`))
		t.Errorf("at 390 px the page is %d px wide (%v): it must fit; wider than the screen:\n%s", w, err, strings.Join(wide, "\n"))
	}

	// The run ended through the page: its knobs are back, and the page's
	// API has its report.
	resp, err := http.Get(page + "/api/runs")
	if err == nil {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(body), `"current": null`) {
			t.Errorf("GET /api/runs after the run: %s", body)
		}
	}
}

// backgroundURL is the background load's listener, as Prometheus scrapes it.
func (run *labRun) backgroundURL(t *testing.T) string {
	t.Helper()
	targets, err := run.api.targets(run.ctx)
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{strings.TrimPrefix(run.api.base, "http://"): true}
	for _, s := range run.services {
		u, _ := url.Parse(s.MetricsURL)
		known[u.Host] = true
	}
	for _, tg := range targets {
		if u, err := url.Parse(tg.ScrapeURL); err == nil && !known[u.Host] {
			return "http://" + u.Host
		}
	}
	t.Fatal("Prometheus scrapes no background load")
	return ""
}
