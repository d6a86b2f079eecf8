//go:build labcheck

package runner

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/orderlab/orderlab/lab/scenario/render"
	"github.com/orderlab/orderlab/lab/scenario/result/resulttest"
)

// verdictGeometry is where, in pixels, the report's verdict picture draws
// its first panel's scale (its left edge, 0.95 ×, the bound, 20 ×), and
// the labels of the whole chart that overlap another.
type verdictGeometry struct {
	Left, Under, Bound, Over float64
	Overlaps                 []string
	Texts                    int
}

const inspectVerdict = `(() => {
  const el = document.querySelector('div.item');
  const c = echarts.getInstanceByDom(el);
  const x = (v) => c.convertToPixel({xAxisIndex: 0, yAxisIndex: 0}, [v, 0])[0];
  const lo = c.getOption().xAxis[0].min;
  const texts = c.getZr().storage.getDisplayList(true).filter((e) => !e.invisible && e.style && typeof e.style.text === 'string' && e.style.text !== '')
    .map((e) => { const r = e.getBoundingRect().clone(); r.applyTransform(e.getComputedTransform()); return {t: e.style.text, r}; });
  const overlaps = [];
  for (let i = 0; i < texts.length; i++) for (let j = i + 1; j < texts.length; j++) {
    const a = texts[i].r, b = texts[j].r;
    if (a.x < b.x + b.width - 1 && b.x < a.x + a.width - 1 && a.y < b.y + b.height - 1 && b.y < a.y + a.height - 1)
      overlaps.push(texts[i].t + " / " + texts[j].t);
  }
  return {left: x(lo), under: x(0.95), bound: x(1), over: x(20), overlaps, texts: texts.length};
})()`

func TestTheReportsVerdictReadsUnderAndFarOverTheBound(t *testing.T) {
	html := filepath.Join(t.TempDir(), "comparing.html")
	f, err := os.Create(html)
	if err != nil {
		t.Fatal(err)
	}
	if err := render.WriteHTML(f, resulttest.Comparing()); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), chromedp.ExecPath(chromium(t)),
		chromedp.Flag("headless", true), chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true),
		chromedp.Flag("no-first-run", true), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900))
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 60*time.Second)
	defer cancelT()
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+html), chromedp.WaitVisible(chromedp.CSS("div.item"))); err != nil {
		t.Fatal(err)
	}
	g, err := chromedp.Run(ctx, chromedp.Evaluate[verdictGeometry](inspectVerdict))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("first panel: left edge %.0f px, 0.95 × %.0f, bound %.0f, 20 × %.0f; %d texts", g.Left, g.Under, g.Bound, g.Over, g.Texts)
	if g.Under-g.Left < 80 || g.Over-g.Under < 80 {
		t.Errorf("0.95 × is a bar of %.0f px and 20 × of %.0f: want both long and far apart (80 px at least)", g.Under-g.Left, g.Over-g.Left)
	}
	if !(g.Under < g.Bound && g.Bound < g.Over) {
		t.Errorf("the bound at %.0f px: want it between 0.95 × (%.0f) and 20 × (%.0f)", g.Bound, g.Under, g.Over)
	}
	if g.Texts < 20 || len(g.Overlaps) > 0 {
		t.Errorf("%d texts drawn; overlapping: %q", g.Texts, g.Overlaps)
	}
}
