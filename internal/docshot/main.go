// Command docshot renders one chart of a scenario's HTML report as a PNG
// for the docs (make pictures), with the headless Chromium that the report
// test uses (lab/scenario, browser_test.go): it opens the report,
// waits for the chart whose element id it is given, and screenshots that
// element alone.
//
//	go run ./internal/docshot -html results/x.html -chart ID -out docs/img/x.png
//	go run ./internal/docshot -html results/x.html -page -out docs/img/x.png
//	go run ./internal/docshot -html results/x.html -list
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/chromedp/chromedp"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "docshot:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("docshot", flag.ContinueOnError)
	html := fs.String("html", "", "the scenario's HTML report")
	chart := fs.String("chart", "", "the element id of the chart to capture, or")
	title := fs.String("title", "", "the start of the chart's title (the first chart whose title starts so)")
	out := fs.String("out", "", "the PNG to write")
	list := fs.Bool("list", false, "list the report's charts (id and title) and exit")
	page := fs.Bool("page", false, "capture the whole page (its top, 1280 px wide, -height tall) instead of one chart")
	pageHeight := fs.Int64("height", 2400, "with -page: the height captured, in CSS pixels")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *html == "" || (!*list && !*page && ((*chart == "") == (*title == "") || *out == "")) || (*page && *out == "") {
		return errors.New("need -html, and -chart, -title or -page, and -out (or -list)")
	}
	exe, err := browser()
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(*html)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "docshot")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(exe), chromedp.Flag("headless", true), chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true), chromedp.Flag("no-first-run", true),
		chromedp.UserDataDir(dir), chromedp.WindowSize(1280, 900))
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	defer cancelT()
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+abs), chromedp.WaitVisible(chromedp.CSS("div.item"))); err != nil {
		return fmt.Errorf("%s on %s: %w", exe, abs, err)
	}
	if *list {
		items, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('div.item')].map(el => {
  const inst = echarts.getInstanceByDom(el); const t = inst && inst.getOption().title;
  return el.id + "  " + (t && t[0] ? t[0].text : ""); })`))
		if err != nil {
			return err
		}
		for _, it := range items {
			fmt.Fprintln(stdout, it)
		}
		return nil
	}
	if *page {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, *pageHeight), chromedp.Sleep(500*time.Millisecond)); err != nil {
			return err
		}
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			return err
		}
		return os.WriteFile(*out, png, 0o644)
	}
	if *title != "" {
		id, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`(() => {
  for (const el of document.querySelectorAll('div.item')) {
    const inst = echarts.getInstanceByDom(el); const t = inst && inst.getOption().title;
    if (t && t[0] && t[0].text.startsWith(%q)) return el.id;
  }
  return ""; })()`, *title)))
		if err != nil {
			return err
		}
		if id == "" {
			return fmt.Errorf("no chart's title starts with %q (-list shows them)", *title)
		}
		*chart = id
	}
	// A viewport as tall as the page: with the page scrolled, the clip of an
	// element far down came out shifted by the height of what lies above.
	height, err := chromedp.Run(ctx, chromedp.Evaluate[int64](`document.documentElement.scrollHeight`))
	if err != nil {
		return err
	}
	sel := chromedp.CSS("#" + *chart)
	if err := chromedp.Do(ctx,
		chromedp.EmulateViewport(1280, height),
		chromedp.Sleep(500*time.Millisecond), // let the charts settle
	); err != nil {
		return fmt.Errorf("chart %s: %w", *chart, err)
	}
	png, err := chromedp.Run(ctx, chromedp.ScreenshotScale(sel, 2))
	if err != nil {
		return fmt.Errorf("chart %s: %w", *chart, err)
	}
	return os.WriteFile(*out, png, 0o644)
}

// browser finds Chromium as the report test does: $CHROMIUM, or chromium,
// chromium-browser or google-chrome on PATH.
func browser() (string, error) {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("headless Chromium not found: install it (apt-get install chromium) or set CHROMIUM")
}
