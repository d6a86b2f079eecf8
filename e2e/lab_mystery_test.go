//go:build labcheck

package e2e

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// mysteryOnPage drives the front page's "What the lab sees" and mystery
// mode in the browser of frontPage: the panel reads the lab's Prometheus;
// a quick mystery runs unnamed (the panel, the knobs and the
// runner's log held back), is answered from the list, and the reveal shows
// what ran, what the lab diagnosed, and the board's panels on the
// run's range. Nothing the page showed before the answer named the pitfall.
func mysteryOnPage(t *testing.T, ctx context.Context, page string, shot func(name, sel string), wait func(what, js string, within time.Duration)) {
	if err := chromedp.Do(ctx, chromedp.Navigate(page+"/#sees")); err != nil {
		t.Fatal(err)
	}
	wait("what the lab sees, read from Prometheus", `["calm", "firing"].includes(document.querySelector("#sees-body").dataset.state)`, 20*time.Second)
	sees, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#sees-body")))
	t.Logf("what the lab sees: %s", sees)
	if !strings.Contains(sees, "No pitfall: none of the 13 pitfall rules") && !strings.Contains(sees, "firing since") {
		t.Errorf("the panel reads %q: want no pitfall of the 13 rules, or a finding with its start", sees)
	}

	// A quick mystery (the catalog's Quick box is checked by default).
	// Pressed from script: the panels above it change height as they
	// refresh, and a click at coordinates can land beside the button.
	press := func(js string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js+`; true`)); err != nil {
			t.Fatal(err)
		}
	}
	// The button is disabled while the page sees a run in progress (it
	// polls, so it may still see the last one): a press then does nothing.
	wait("the page to see no run in progress and enable Run a mystery",
		`state.current === null && !document.querySelector("#mystery-start").disabled`, 30*time.Second)
	press(`document.querySelector("#mystery-start").click()`)
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector("#mystery-msg").textContent !== ""`,
		chromedp.WithPollingTimeout(30*time.Second), chromedp.WithPollingInterval(100*time.Millisecond))); err != nil {
		button, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#mystery-start").outerHTML + " " +
		  JSON.stringify(performance.getEntriesByType("resource").filter(e => e.name.includes("/api/")).slice(-12).map(e => [e.name, Math.round(e.duration)]))`))
		started := time.Now()
		resp, herr := http.Post(page+"/api/mysteries", "application/json", strings.NewReader(`{"quick": true}`))
		if herr == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			t.Logf("POST /api/mysteries from the test: %s in %v: %.300s", resp.Status, time.Since(started), body)
		} else {
			t.Logf("POST /api/mysteries from the test: %v after %v", herr, time.Since(started))
		}
		t.Fatalf("Run a mystery, pressed, says nothing after 30 s (%v): %s", err, button)
	}
	msg, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#mystery-msg")))
	t.Logf("Run a mystery: %s", msg)
	wait("the mystery's run", `!document.querySelector("#mystery-view").hidden && document.querySelector("#run-title").textContent.startsWith("mystery: which pitfall") &&
	  document.querySelectorAll("#mystery-choices input").length >= 13`, 20*time.Second)
	// While it runs, the page holds back what the lab sees and the knobs.
	wait("the lab's view and the knobs held back, or the run's end", `document.querySelector("#run-state").dataset.state !== "running" ||
	  (document.querySelector("#sees-body").dataset.state === "held" && document.querySelector("#knob-forms").textContent.includes("mystery is running"))`, 10*time.Second)
	if state, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#run-state").dataset.state`)); state != "running" {
		t.Errorf("the mystery's run is %s within seconds of its start: want it running, the page holding back the knobs and what the lab sees", state)
	} else {
		// A change's answer carries every knob in force: refused too.
		req, _ := http.NewRequest(http.MethodPatch, page+"/api/knobs/semaphore", strings.NewReader(`{"LIMIT_WAIT": "100ms"}`))
		if resp, err := http.DefaultClient.Do(req); err != nil {
			t.Errorf("PATCH /api/knobs/semaphore during the mystery: %v", err)
		} else {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusConflict || !strings.Contains(string(body), "mystery is running") {
				t.Errorf("PATCH /api/knobs/semaphore during the mystery: %s %.300s, want 409: its answer would show the knobs in force", resp.Status, body)
			}
		}
	}
	var before []string
	seen := func() {
		// The knobs are held while it runs and put back when it ends
		// (the knobs' table describes each knob by the pitfall it turns
		// on, mystery or not, so it is not read here).
		text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`["#sees", "#run", "#mystery-state"].map(s => document.querySelector(s).innerText).join("\n")`))
		if err != nil {
			t.Fatal(err)
		}
		before = append(before, text)
	}
	seen()
	shot("front-mystery.png", "#mystery")
	wait("the mystery's end", `document.querySelector("#run-state").dataset.state !== "running" && document.querySelector("#run-state").dataset.state !== "stopping"`, 3*time.Minute)
	seen()

	// Answer the first pitfall of the list.
	press(`document.querySelector("#mystery-choices input[name=pitfall]").click(); document.querySelector("#mystery-form button[type=submit]").click()`)
	wait("the reveal", `!document.querySelector("#mystery-reveal").hidden && document.querySelectorAll("#mystery-panels a").length >= 2`, 20*time.Second)
	reveal, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#mystery-reveal")))
	ran, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#mystery-reveal [data-correct]").textContent.match(/it was ([a-z-]+)\./)[1]`))
	if err != nil {
		t.Fatalf("the reveal names no pitfall: %v\n%s", err, reveal)
	}
	t.Logf("it was %s; the reveal:\n%s", ran, reveal)
	// Answered, the run shows what it held back: its error, if any.
	if state, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#run-state"))); state != "finished" {
		runErr, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#run-error")))
		t.Errorf("the mystery's run (%s): %q, want it finished; its error: %s", ran, state, runErr)
	}
	for _, want := range []string{"What ran", "Knobs: ", "Load: ", "What the lab diagnosed", "docs/scenarios/" + ran + ".md", "What is firing"} {
		if !strings.Contains(reveal, want) {
			t.Errorf("the reveal lacks %q", want)
		}
	}
	links, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#mystery-panels a")].map(a => a.href)`))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range links {
		if !strings.Contains(l, "/d/orderlab-pool-starvation?from=") || !strings.Contains(l, "&to=1") {
			t.Errorf("board link %s: want the board on the run's range", l)
		}
	}
	if !strings.Contains(links[0], "viewPanel=panel-") {
		t.Errorf("first board link %s: want the What is firing panel", links[0])
	}
	for i, text := range before {
		if strings.Contains(text, ran) {
			t.Errorf("the page named %s before the answer (reading %d):\n%s", ran, i, text)
		}
	}
	wait("what the lab sees, back after the answer", `document.querySelector("#sees-body").dataset.state !== "held"`, 10*time.Second)
	shot("front-mystery-reveal.png", "#mystery-reveal")
}
