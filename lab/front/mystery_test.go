package front

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/orderlab/orderlab/internal/poll"
	"github.com/orderlab/orderlab/lab/front/mystery"
	"github.com/orderlab/orderlab/lab/scenario"
	"github.com/orderlab/orderlab/lab/scenario/catalog"
	"github.com/orderlab/orderlab/lab/scenario/runner"
	"github.com/orderlab/orderlab/lab/scenario/setup"
)

// promRules is one pitfall rule, as /api/v1/rules lists it.
const promRules = `{"groups":[{"name":"pitfalls","rules":[{"type":"alerting","name":"PitfallConnectionLeak","labels":{"pitfall":"connection-leak"},"health":"ok"}]}]}`

// leakFiring is connection-leak firing on unbounded, as /api/v1/alerts
// lists it.
const leakFiring = `{"alerts":[{"labels":{"alertname":"PitfallConnectionLeak","pitfall":"connection-leak","service":"unbounded"},
 "annotations":{"summary":"unbounded: a pool connection has been held for 31 s","runbook_url":"docs/scenarios/connection-leak.md",
 "evidence":"longest_hold=31 s; acquires=0.5 /s"},"state":"firing","activeAt":"2026-12-06T09:00:00Z"}]}`

// stubPrometheus answers the two questions lab diagnose asks with rules
// and alerts (the data objects of Prometheus' answers).
func stubPrometheus(t *testing.T, rules, alerts string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data := map[string]string{"/api/v1/rules": rules, "/api/v1/alerts": alerts}[r.URL.Path]
		if data == "" {
			http.NotFound(w, r)
			return
		}
		_, _ = io.WriteString(w, `{"status":"success","data":`+data+`}`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// labPage is the page with the whole catalog, the three services at an
// address where nothing answers (a run fails at its first knob), and prom
// as its Prometheus; its mysteries are drawn from a source seeded with
// seed.
func labPage(t *testing.T, prom string, seed uint64) (*Server, string) {
	t.Helper()
	all, err := catalog.All()
	if err != nil {
		t.Fatal(err)
	}
	eps := map[string]setup.Endpoint{}
	for _, svc := range scenario.Services {
		eps[svc] = setup.Endpoint{URL: "http://127.0.0.1:1", MetricsURL: "http://127.0.0.1:1/metrics", AdminURL: "http://127.0.0.1:1"}
	}
	srv, err := newServer(Config{Catalog: all, Prometheus: prom, Lab: setup.Lab{Endpoints: eps},
		Runner: runner.Runner{Out: t.TempDir(), Board: "http://grafana.test/d/orderlab-pool-starvation"}}, rand.New(rand.NewPCG(seed, 7)))
	if err != nil {
		t.Fatal(err)
	}
	page := httptest.NewServer(srv)
	t.Cleanup(func() { page.Close(); srv.Close() })
	return srv, page.URL
}

// get sends method path with body and returns the status and the answer.
func get(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// TestAMysteryIsRevealedOnlyOnceAnswered: every answer the page's API gives
// about a mystery before it is answered (the mystery, its run, the list of
// runs, what the lab sees, the report) names neither the pitfall that ran
// nor a knob it set; the answer reveals both, what the lab saw during the
// run with its evidence, and the board's panels on the run's range.
func TestAMysteryIsRevealedOnlyOnceAnswered(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) { revealOnce(t, seed) })
	}
}

func revealOnce(t *testing.T, seed uint64) {
	_, page := labPage(t, stubPrometheus(t, promRules, leakFiring), seed)
	code, started := get(t, "POST", page+"/api/mysteries", `{"quick": true, "by": "tester"}`)
	if code != http.StatusAccepted {
		t.Fatalf("start: %d %s", code, started)
	}
	var m mystery.Mystery
	if err := json.Unmarshal([]byte(started), &m); err != nil {
		t.Fatal(err)
	}
	if !m.Run.Mystery || m.Run.Scenario != "mystery" || m.Reveal != nil || len(m.Choices) < 13 {
		t.Fatalf("started: %+v", m)
	}
	id := fmt.Sprint(m.ID)
	// The run fails at once (no service answers); what the server said
	// while it ran and after, before the answer.
	before := []string{started}
	poll.Until(t, 30*time.Second, "the run's end", func() error {
		_, body := get(t, "GET", page+"/api/runs/"+id, "")
		before = append(before, body)
		if !strings.Contains(body, `"ended_at"`) {
			return fmt.Errorf("still running: %.200s", body)
		}
		return nil
	})
	for _, path := range []string{"/api/runs", "/api/mysteries/" + id} {
		_, body := get(t, "GET", page+path, "")
		before = append(before, body)
	}
	if code, body := get(t, "GET", page+"/api/diagnosis", ""); code != http.StatusConflict || !strings.Contains(body, "once you answer") {
		t.Errorf("what the lab sees before the answer: %d %s, want 409", code, body)
	}
	if code, body := get(t, "GET", page+"/api/runs/"+id+"/report.json", ""); code != http.StatusConflict {
		t.Errorf("the report before the answer: %d %s, want 409", code, body)
	}
	if code, body := get(t, "POST", page+"/api/mysteries", `{"quick": true, "among": ["too-many-clients"]}`); code != http.StatusBadRequest || !strings.Contains(body, "among:") {
		t.Errorf("a mystery among pitfalls none of which it runs: %d %s, want 400 naming the field", code, body)
	}
	if code, body := get(t, "POST", page+"/api/mysteries/"+id+"/answer", `{"pitfall": "gremlins"}`); code != http.StatusBadRequest || !strings.Contains(body, "pitfall:") {
		t.Errorf("an answer off the list: %d %s, want 400 naming the field", code, body)
	}

	answer := m.Choices[int(seed)%len(m.Choices)].Pitfall
	code, body := get(t, "POST", page+"/api/mysteries/"+id+"/answer", `{"pitfall": "`+answer+`"}`)
	if code != http.StatusOK {
		t.Fatalf("answer: %d %s", code, body)
	}
	if code, again := get(t, "POST", page+"/api/mysteries/"+id+"/answer", `{"pitfall": "`+answer+`"}`); code != http.StatusConflict {
		t.Errorf("a second answer: %d %s, want 409", code, again)
	}
	// The last question to Prometheus comes after the run's end.
	var rv *mystery.Reveal
	poll.Until(t, 30*time.Second, "the question after the run's end", func() error {
		var got mystery.Mystery
		_, body := get(t, "GET", page+"/api/mysteries/"+id, "")
		if err := json.Unmarshal([]byte(body), &got); err != nil || got.Reveal == nil {
			return fmt.Errorf("%v: %.300s", err, body)
		}
		rv = got.Reveal
		if rv.Diagnosed.Questions < 2 {
			return fmt.Errorf("%d questions answered", rv.Diagnosed.Questions)
		}
		return nil
	})
	ran := rv.Ran
	t.Logf("ran %s: %+v", ran.Pitfall, ran.Settings)
	for i, b := range before {
		var tell []string
		said := withoutChoices(t, b)
		if strings.Contains(said, ran.Pitfall) {
			tell = append(tell, ran.Pitfall)
		}
		for knob := range ran.Knobs {
			if strings.Contains(said, knob) {
				tell = append(tell, knob)
			}
		}
		if tell != nil {
			t.Errorf("answer %d before the reveal names %v:\n%s", i, tell, b)
		}
	}
	if rv.Answer != answer || rv.Correct != (answer == ran.Pitfall) || !slices.ContainsFunc(m.Choices, func(c mystery.Choice) bool { return c.Pitfall == ran.Pitfall }) {
		t.Errorf("reveal: answer %s, correct %v, ran %s", rv.Answer, rv.Correct, ran.Pitfall)
	}
	if len(ran.Settings) == 0 || len(ran.Knobs) == 0 || len(ran.Load) != 1 || ran.Page != "docs/scenarios/"+ran.Pitfall+".md" {
		t.Errorf("ran: %+v", ran)
	}
	// What the lab saw: the stub's leak, with its evidence in units.
	d := rv.Diagnosed
	if len(d.Findings) != 1 || d.Findings[0].Pitfall != "connection-leak" || d.Findings[0].Service != "unbounded" ||
		len(d.Findings[0].Evidence) != 2 || *d.Findings[0].Evidence[0].Value != 31 || d.Findings[0].Evidence[0].Unit != "s" ||
		d.Named != (ran.Pitfall == "connection-leak") {
		t.Errorf("diagnosed %+v", d)
	}
	if len(rv.Panels) < 2 || rv.Panels[0].Title != "What is firing: pitfalls named by the alerts" || !strings.Contains(rv.Panels[0].URL, "viewPanel=panel-3") ||
		!strings.Contains(rv.Panels[0].URL, "from=") || strings.Contains(rv.Panels[0].URL, "to=now") || !strings.Contains(rv.Board, "&to=") {
		t.Errorf("board %s, panels %+v: want the run's range, the alerts' panel first", rv.Board, rv.Panels)
	}
	// Answered, the run shows what it held back, and the lab's view is back.
	if _, body := get(t, "GET", page+"/api/runs/"+id, ""); !strings.Contains(body, "mystery") || strings.Contains(body, "shown once the mystery is answered") {
		t.Errorf("the run after the answer: %s", body)
	}
	if code, body := get(t, "GET", page+"/api/diagnosis", ""); code != http.StatusOK {
		t.Errorf("what the lab sees after the answer: %d %s", code, body)
	}
}

// withoutChoices is an answer without its list of answers to pick from,
// which names every pitfall (and, in their titles, some knobs).
func withoutChoices(t *testing.T, body string) string {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	delete(v, "choices")
	b, _ := json.Marshal(v)
	return string(b)
}

// TestWhatTheLabSees: GET /api/diagnosis is lab diagnose's reading, with
// the alert's summary, the catalog's title and the board's panel; when it
// cannot ask, it says so, naming Prometheus.
func TestWhatTheLabSees(t *testing.T) {
	_, page := labPage(t, stubPrometheus(t, promRules, leakFiring), 1)
	code, body := get(t, "GET", page+"/api/diagnosis", "")
	var d mystery.Diagnosis
	if code != http.StatusOK || json.Unmarshal([]byte(body), &d) != nil {
		t.Fatalf("%d %s", code, body)
	}
	f := d.Findings
	if d.Rules != 1 || len(f) != 1 || f[0].Pitfall != "connection-leak" || f[0].Service != "unbounded" || f[0].Title == "" ||
		!strings.HasPrefix(f[0].Summary, "unbounded: a pool connection") || f[0].Page != "docs/scenarios/connection-leak.md" ||
		f[0].Evidence[1].Signal != "acquires" || f[0].Evidence[1].Unit != "/s" || !strings.Contains(f[0].Board, "viewPanel=panel-3") ||
		!strings.Contains(body, `"since": "2026-12-06T09:00:00Z"`) {
		t.Errorf("%s", body)
	}

	_, calm := labPage(t, stubPrometheus(t, promRules, `{"alerts":[]}`), 1)
	if code, body := get(t, "GET", calm+"/api/diagnosis", ""); code != http.StatusOK || !strings.Contains(body, `"findings": []`) {
		t.Errorf("calm: %d %s", code, body)
	}
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	_, page = labPage(t, down.URL, 1)
	if code, body := get(t, "GET", page+"/api/diagnosis", ""); code != http.StatusServiceUnavailable || !strings.Contains(body, "cannot ask Prometheus at "+down.URL) {
		t.Errorf("Prometheus down: %d %s", code, body)
	}
	_, page = labPage(t, stubPrometheus(t, `{"groups":[]}`, `{"alerts":[]}`), 1)
	if code, body := get(t, "GET", page+"/api/diagnosis", ""); code != http.StatusServiceUnavailable || !strings.Contains(body, "no pitfall rule loaded") {
		t.Errorf("no pitfall rules: %d %s", code, body)
	}
}
