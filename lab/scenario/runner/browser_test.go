//go:build labcheck

package runner

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromium finds the browser: $CHROMIUM, or chromium / chromium-browser /
// google-chrome on PATH. Missing, the test fails: the HTML report is a
// deliverable and this is the check that it renders.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("headless Chromium is needed to check the HTML report and was not found: " +
		"install it with 'apt-get update && apt-get install -y chromium chromium-driver' (Debian), or set CHROMIUM to its path")
	return ""
}

// chartState is what the page says about one chart element.
type chartState struct {
	ID       string `json:"id"`
	Instance bool   `json:"instance"` // echarts.getInstanceByDom found it
	Width    int    `json:"width"`    // of its canvas
	Height   int    `json:"height"`
	Series   int    `json:"series"`
	Painted  int    `json:"painted"` // canvas pixels that are not blank
}

const inspectCharts = `(() => [...document.querySelectorAll('div.item')].map(el => {
  const inst = typeof echarts === 'undefined' ? null : echarts.getInstanceByDom(el);
  const c = el.querySelector('canvas');
  let painted = 0;
  if (c && c.width > 0 && c.height > 0) {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    for (let i = 0; i < d.length; i += 4 * 7) {
      if (d[i + 3] > 0 && (d[i] < 240 || d[i + 1] < 240 || d[i + 2] < 240)) painted++;
    }
  }
  return {id: el.id, instance: !!inst, width: c ? c.width : 0, height: c ? c.height : 0,
          series: inst ? inst.getOption().series.length : 0, painted: painted};
}))()`

// layoutState is what the page says about its width and its rate charts.
type layoutState struct {
	Page   int      `json:"page"`   // the viewport's width
	Wide   []string `json:"wide"`   // tables wider than it: their first header cells
	Hidden []string `json:"hidden"` // legend entries of the throughput chart switched off
	Series []string `json:"series"` // its series
}

const inspectLayout = `(() => {
  const page = document.documentElement.clientWidth;
  const wide = [...document.querySelectorAll('table')].filter(t => t.getBoundingClientRect().right > page)
    .map(t => t.querySelector('th') ? t.querySelector('th').textContent + ' table' : 'a table');
  let hidden = [], series = [];
  for (const el of document.querySelectorAll('div.item')) {
    const o = echarts.getInstanceByDom(el).getOption();
    if (!o.title[0].text.startsWith('Throughput')) continue;
    series = o.series.map(s => s.name);
    const sel = o.legend[0].selected || {};
    hidden = Object.keys(sel).filter(k => !sel[k]);
    break;
  }
  return {page, wide, hidden, series};
})()`

// checkChartsRender opens the report in headless Chromium, checks that
// every chart element holds an initialised ECharts instance whose canvas
// has a size and painted pixels, that no table is wider than the window and
// that the throughput chart shows each run's rate over the window with its
// per-sample rate hidden, saves a full-page screenshot to png, and
// returns the number of charts.
func checkChartsRender(t *testing.T, htmlPath, png string) int {
	t.Helper()
	exe := chromium(t)
	abs, err := filepath.Abs(htmlPath)
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 60*time.Second)
	defer cancelT()

	if err := chromedp.Do(ctx,
		chromedp.Navigate("file://"+abs),
		chromedp.WaitVisible(chromedp.CSS("div.item")),
	); err != nil {
		t.Fatalf("Chromium (%s) on %s: %v", exe, abs, err)
	}
	// Until every chart has painted: a chart that never does is named by
	// the checks below, so running out of time is not by itself the failure.
	_, _ = chromedp.Run(ctx, chromedp.Poll[bool]("("+inspectCharts+").every(s => s.instance && s.painted >= 50)",
		chromedp.WithPollingTimeout(20*time.Second), chromedp.WithPollingInterval(100*time.Millisecond)))
	declared, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS("body"), "data-charts"))
	if err != nil {
		t.Fatal(err)
	}
	states, err := chromedp.Run(ctx, chromedp.Evaluate[[]chartState](inspectCharts))
	if err != nil {
		t.Fatal(err)
	}
	layout, err := chromedp.Run(ctx, chromedp.Evaluate[layoutState](inspectLayout))
	if err != nil {
		t.Fatal(err)
	}
	if len(layout.Wide) > 0 {
		t.Errorf("at %d px, tables wider than the page: %v", layout.Page, layout.Wide)
	}
	if len(layout.Series) == 0 || len(layout.Hidden)*2 != len(layout.Series) {
		t.Errorf("throughput chart: series %q, hidden %q; want each run's rate over the window shown and its per-sample rate hidden", layout.Series, layout.Hidden)
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // quality 100: PNG
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(png, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	if keep := os.Getenv("SCENARIO_SCREENSHOT"); keep != "" {
		_ = os.WriteFile(keep, shot, 0o644)
	}
	t.Logf("screenshot: %s (%d bytes)", png, len(shot))
	if len(states) == 0 || declared.Value != strconv.Itoa(len(states)) {
		t.Fatalf("page declares %s charts, Chromium found %d chart elements", declared.Value, len(states))
	}
	for _, s := range states {
		if !s.Instance || s.Width == 0 || s.Height == 0 || s.Series == 0 || s.Painted < 50 {
			t.Errorf("chart %s did not render: %+v", s.ID, s)
		}
	}
	return len(states)
}
