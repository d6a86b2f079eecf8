package runner

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/trace"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/orderlab/orderlab/lab/knobs/knobstest"
	"github.com/orderlab/orderlab/lab/scenario"
	"github.com/orderlab/orderlab/lab/scenario/render"
	"github.com/orderlab/orderlab/lab/scenario/result"
	"github.com/orderlab/orderlab/lab/scenario/setup"
)

// snapshotYAML misses on the semaphore (its orders all succeed) and meets
// on unbounded, twice over.
const snapshotYAML = `
name: snapshot-test
title: a run that misses keeps its flight recorder window
reproduces: a test
question: does a missed verdict keep the window beside the report?
targets: [unbounded, semaphore]
phases:
  - name: orders
    request: {method: POST, path: /orders}
    load: {mode: closed, concurrency: 2, requests: 20}
expect:
  - target: semaphore
    says: half its orders fail (they do not, so this misses)
    slo: "errors>50%"
  - target: unbounded
    says: its orders succeed
    slo: "errors<1%"
panels: [Pool acquire wait p99]
`

// admin is a target's admin listener as far as the runner reads it: GET
// /debug/flightrecorder, answered by serve, counted.
type admin struct {
	*httptest.Server
	asked atomic.Int64
}

func newAdmin(t *testing.T, serve http.HandlerFunc) *admin {
	a := &admin{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+flightRecorderPath, func(w http.ResponseWriter, r *http.Request) {
		a.asked.Add(1)
		serve(w, r)
	})
	a.Server = httptest.NewServer(mux)
	t.Cleanup(a.Close)
	return a
}

// flightRecorder serves the window of a real flight recorder, started in
// this process for the test, as the services' admin listener does
// (runtime/trace allows one a process: the test's admins share it).
func flightRecorder(t *testing.T) http.HandlerFunc {
	t.Helper()
	rec := trace.NewFlightRecorder(trace.FlightRecorderConfig{MinAge: time.Second, MaxBytes: 1 << 20})
	if err := rec.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rec.Stop)
	return func(w http.ResponseWriter, _ *http.Request) {
		var buf bytes.Buffer
		if _, err := rec.WriteTo(&buf); err != nil {
			http.Error(w, "no flight recorder window: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write(buf.Bytes())
	}
}

// snapshotRun runs snapshotYAML twice over on two fake services (the API
// and /metrics, knobstest) whose admin listeners are admins.
func snapshotRun(t *testing.T, admins map[string]*admin, prometheus string) (*result.Result, render.Files) {
	t.Helper()
	eps := map[string]setup.Endpoint{}
	for _, name := range []string{"unbounded", "semaphore"} {
		svc := knobstest.New("", map[string]string{})
		t.Cleanup(svc.Close)
		eps[name] = setup.Endpoint{URL: svc.URL, MetricsURL: svc.URL + "/metrics", AdminURL: admins[name].URL}
	}
	s, err := scenario.Parse([]byte(snapshotYAML))
	if err != nil {
		t.Fatal(err)
	}
	r := &Runner{Mode: &setup.Lab{Endpoints: eps}, Out: t.TempDir(), Count: 2, Prometheus: prometheus,
		Pause: time.Millisecond, Scrape: 50 * time.Millisecond, Log: testWriter{t}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, files, err := r.Run(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if v := result.Verdicts(res); len(v) != 2 || !strings.HasPrefix(v[0], "MISSED semaphore") || !strings.HasPrefix(v[1], "MET    unbounded") {
		t.Fatalf("verdicts %q, want the semaphore's missed and unbounded's met", v)
	}
	return res, files
}

// reports reads a run's JSON, Markdown and HTML.
func reports(t *testing.T, f render.Files) (json, md, html string) {
	t.Helper()
	var out [3]string
	for i, p := range []string{f.JSON, f.Markdown, f.HTML} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = string(b)
	}
	return out[0], out[1], out[2]
}

// traces lists the trace files beside the report.
func traces(t *testing.T, f render.Files) []string {
	t.Helper()
	got, err := filepath.Glob(filepath.Join(filepath.Dir(f.JSON), "*.trace"))
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// A run that misses keeps its target's window, once for the phase however
// many repetitions miss, beside the report, which links it with why; a
// run that meets its expectations takes none.
func TestAMissedRunKeepsItsFlightRecorderWindow(t *testing.T) {
	rec := flightRecorder(t)
	admins := map[string]*admin{"semaphore": newAdmin(t, rec), "unbounded": newAdmin(t, rec)}
	res, files := snapshotRun(t, admins, "")
	if n := admins["unbounded"].asked.Load(); n != 0 {
		t.Errorf("unbounded met its expectation, and its window was asked for %d times: want none", n)
	}
	if n := admins["semaphore"].asked.Load(); n != 1 {
		t.Errorf("the semaphore missed twice, its window was asked for %d times: want once (one a phase and target)", n)
	}
	snaps := res.Phases[0].Snapshots
	stem := strings.TrimSuffix(filepath.Base(files.JSON), ".json")
	want := stem + "-orders-semaphore.trace"
	if len(snaps) != 1 || snaps[0].Target != "semaphore" || snaps[0].File != want || snaps[0].Err != "" || snaps[0].Repetition != 0 ||
		!strings.HasPrefix(snaps[0].Why, "MISSED semaphore, orders: errors>50%: half its orders fail") {
		t.Fatalf("snapshots %+v, want the semaphore's, %s, taken for its miss", snaps, want)
	}
	path := filepath.Join(filepath.Dir(files.JSON), want)
	if got := traces(t, files); !slices.Equal(got, []string{path}) || !slices.Equal(files.Snapshots, got) {
		t.Fatalf("trace files %q, Files.Snapshots %q: want %s alone", got, files.Snapshots, path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !isTrace(b) || int64(len(b)) != snaps[0].Bytes || !bytes.HasPrefix(b, []byte("go 1.")) {
		t.Errorf("%s: %d bytes starting %q, recorded %d: want the recorder's trace", path, len(b), b[:min(len(b), 16)], snaps[0].Bytes)
	}
	json, md, html := reports(t, files)
	for what, in := range map[string]struct{ text, link, why string }{
		"JSON":     {json, `"file": "` + want + `"`, `"why": "MISSED semaphore, orders: errors\u003e50%: half its orders fail`},
		"Markdown": {md, "- [" + want + "](" + want + ") (semaphore, ", "taken because MISSED semaphore, orders: errors>50%"},
		"HTML":     {html, `<a href="` + want + `">` + want + `</a> (semaphore, `, "taken because MISSED semaphore, orders: errors&gt;50%"},
	} {
		if !strings.Contains(in.text, in.link) || !strings.Contains(in.text, in.why) {
			t.Errorf("%s report lacks %q or %q:\n%s", what, in.link, in.why, in.text)
		}
	}
	if !strings.Contains(md, "go tool trace FILE") || strings.Count(md, ".trace") != 2 {
		t.Errorf("Markdown: want one link to the trace and how to open it:\n%s", md)
	}
}

// A window that cannot be had is reported, with the error and what asked
// for it, never dropped: a listener that answers 503, and one that answers
// something else than a trace.
func TestASnapshotThatFailsIsReported(t *testing.T) {
	for _, c := range []struct {
		name  string
		serve http.HandlerFunc
		err   string
	}{
		{"503", func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "no flight recorder window: not started", http.StatusServiceUnavailable)
		}, "503 Service Unavailable: no flight recorder window: not started"},
		{"not a trace", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("{}")) },
			`200 OK, not an execution trace: "{}"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			admins := map[string]*admin{"semaphore": newAdmin(t, c.serve), "unbounded": newAdmin(t, c.serve)}
			res, files := snapshotRun(t, admins, "")
			snaps := res.Phases[0].Snapshots
			if len(snaps) != 1 || snaps[0].Target != "semaphore" || snaps[0].File != "" || !strings.Contains(snaps[0].Err, c.err) ||
				!strings.HasPrefix(snaps[0].Why, "MISSED semaphore") {
				t.Fatalf("snapshots %+v, want the semaphore's, failed with %q", snaps, c.err)
			}
			if got := traces(t, files); len(got) != 0 || len(files.Snapshots) != 0 {
				t.Errorf("trace files %q, Files.Snapshots %q: want none", got, files.Snapshots)
			}
			_, md, html := reports(t, files)
			for what, text := range map[string]string{"Markdown": md, "HTML": html} {
				if !strings.Contains(text, "semaphore: not kept: GET "+admins["semaphore"].URL+flightRecorderPath) ||
					!strings.Contains(text, "(asked for because MISSED semaphore") {
					t.Errorf("%s report does not say the snapshot failed and why it was asked for:\n%s", what, text)
				}
			}
		})
	}
}

// A run that meets its expectations but on whose target a pitfall alert
// fires (Prometheus' answer as lab diagnose reads it) keeps its window too;
// an alert that began before the run (an earlier run's, still firing) does
// not ask for it.
func TestAPitfallAlertKeepsTheWindow(t *testing.T) {
	prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/v1/rules":
			_, _ = w.Write([]byte(`{"status":"success","data":{"groups":[{"name":"pitfalls","rules":[
 {"type":"alerting","name":"PitfallPoolStarvation","labels":{"pitfall":"pool-starvation"},"health":"ok"},
 {"type":"alerting","name":"PitfallConnectionLeak","labels":{"pitfall":"connection-leak"},"health":"ok"}]}]}}`))
		case "/api/v1/alerts":
			// Asked right after a run: the pool-starvation alert began
			// now, the connection-leak one long before.
			_, _ = w.Write([]byte(`{"status":"success","data":{"alerts":[
 {"labels":{"alertname":"PitfallConnectionLeak","pitfall":"connection-leak","service":"unbounded"},
  "annotations":{"summary":"an earlier run's leak"},"state":"firing","activeAt":"2026-12-06T11:09:18Z"},
 {"labels":{"alertname":"PitfallPoolStarvation","pitfall":"pool-starvation","service":"unbounded"},
  "annotations":{"summary":"acquires wait 1.53 s (p99)\nfor a pool 99% acquired"},"state":"firing","activeAt":"` +
				time.Now().UTC().Format(time.RFC3339Nano) + `"}]}}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer prom.Close()
	rec := flightRecorder(t)
	admins := map[string]*admin{"semaphore": newAdmin(t, rec), "unbounded": newAdmin(t, rec)}
	res, files := snapshotRun(t, admins, prom.URL)
	snaps := res.Phases[0].Snapshots
	if len(snaps) != 2 || snaps[0].Target != "unbounded" || snaps[1].Target != "semaphore" {
		t.Fatalf("snapshots %+v, want unbounded's (its alert) and the semaphore's (its miss)", snaps)
	}
	prefix, suffix := "pitfall alert pool-starvation firing on unbounded since ", ": acquires wait 1.53 s (p99) for a pool 99% acquired"
	if why := snaps[0].Why; !strings.HasPrefix(why, prefix) || !strings.HasSuffix(why, suffix) || snaps[0].Err != "" || snaps[0].File == "" {
		t.Errorf("unbounded's snapshot %+v, want a file, taken because %q...%q (the alert that began with the run, not the earlier one)", snaps[0], prefix, suffix)
	}
	if got := traces(t, files); len(got) != 2 {
		t.Errorf("trace files %q, want two", got)
	}
}
