package diagnose

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// fakeProm answers /api/v1/rules and /api/v1/alerts with the given data
// (the envelope's data object), as Prometheus does; what else it is asked
// fails the test.
func fakeProm(t *testing.T, rules, alerts string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/v1/rules":
			if r.URL.Query().Get("type") != "alert" {
				t.Errorf("rules asked with %q, want type=alert", r.URL.RawQuery)
			}
			_, _ = w.Write([]byte(`{"status":"success","data":` + rules + `}`))
		case "/api/v1/alerts":
			_, _ = w.Write([]byte(`{"status":"success","data":` + alerts + `}`))
		default:
			t.Errorf("unexpected request %s", r.URL)
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// twoPitfallRules are two pitfall rules and a symptom rule, as a Prometheus
// loading prometheus/rules lists them; the second pitfall rule fails.
const twoPitfallRules = `{"groups":[{"name":"pitfalls","rules":[
 {"type":"alerting","name":"PitfallPoolStarvation","labels":{"pitfall":"pool-starvation","service":"unbounded","severity":"warning"},"health":"ok"},
 {"type":"alerting","name":"PitfallRetryStorm","labels":{"pitfall":"retry-storm","severity":"warning"},"health":"err","lastError":"many-to-many matching not allowed"}]},
 {"name":"symptoms","rules":[{"type":"alerting","name":"TailLatencyHigh","labels":{"severity":"warning"},"health":"ok"}]}]}`

const someAlerts = `{"alerts":[
 {"labels":{"alertname":"PitfallPoolStarvation","pitfall":"pool-starvation","service":"unbounded","severity":"warning"},
  "annotations":{"summary":"pool wait p99 1.8 s","runbook_url":"docs/scenarios/pool-starvation.md","evidence":"pool_wait_p99=1.8 s; waiting_acquires=240 count"},
  "state":"firing","activeAt":"2026-12-06T10:02:03.5+01:00","value":"1.8e+00"},
 {"labels":{"alertname":"PitfallConnectionLeak","pitfall":"connection-leak","job":"semaphore"},
  "annotations":{},"state":"firing","activeAt":"2026-12-06T09:00:00Z","value":"1e+00"},
 {"labels":{"alertname":"PitfallRetryStorm","pitfall":"retry-storm","service":"pipeline"},
  "annotations":{"runbook_url":"docs/scenarios/retry-storm.md"},"state":"pending","activeAt":"2026-12-06T09:10:00Z","value":"1e+00"},
 {"labels":{"alertname":"TailLatencyHigh","service":"unbounded"},"annotations":{},"state":"firing","activeAt":"2026-12-06T09:00:00Z","value":"3e+00"}]}`

func TestReadNamesTheFiringPitfalls(t *testing.T) {
	r, err := Read(context.Background(), http.DefaultClient, fakeProm(t, twoPitfallRules, someAlerts)+"/")
	if err != nil {
		t.Fatal(err)
	}
	if r.Rules != 2 {
		t.Errorf("Rules = %d, want 2 (the symptom rule is no pitfall rule)", r.Rules)
	}
	if len(r.Broken) != 1 || !strings.HasPrefix(r.Broken[0], "PitfallRetryStorm: many-to-many") {
		t.Errorf("Broken = %q, want the retry-storm rule with its error", r.Broken)
	}
	// Sorted by pitfall; a rule with no service label names the job; with
	// no runbook_url, the catalog's page; the symptom alert is no finding.
	if len(r.Findings) != 2 {
		t.Fatalf("Findings = %+v, want connection-leak and pool-starvation", r.Findings)
	}
	leak, starve := r.Findings[0], r.Findings[1]
	if leak.Pitfall != "connection-leak" || leak.Service != "semaphore" || leak.Page != "docs/scenarios/connection-leak.md" || len(leak.Evidence) != 0 {
		t.Errorf("first finding %+v", leak)
	}
	if starve.Pitfall != "pool-starvation" || starve.Service != "unbounded" || starve.Summary != "pool wait p99 1.8 s" ||
		!starve.Since.Equal(time.Date(2026, 12, 6, 9, 2, 3, 5e8, time.UTC)) || starve.Since.Location() != time.UTC ||
		len(starve.Evidence) != 2 || *starve.Evidence[1].Value != 240 {
		t.Errorf("second finding %+v", starve)
	}
	if len(r.Pending) != 1 || r.Pending[0].Pitfall != "retry-storm" {
		t.Errorf("Pending = %+v, want retry-storm alone", r.Pending)
	}

	var js, text bytes.Buffer
	if err := WriteJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"since": "2026-12-06T09:02:03.5Z"`, `"evidence": []`, `"page": "docs/scenarios/pool-starvation.md"`} {
		if !strings.Contains(js.String(), want) {
			t.Errorf("JSON lacks %s:\n%s", want, js.String())
		}
	}
	if strings.Contains(js.String(), "retry-storm") || strings.Contains(js.String(), "summary") {
		t.Errorf("JSON holds a pending alert or the summary:\n%s", js.String())
	}
	WriteText(&text, r, "P", time.Date(2026, 12, 6, 9, 4, 3, 5e8, time.UTC))
	want := `connection-leak on semaphore: firing, its condition holding since 2026-12-06T09:00:00Z (4m4s ago)
  read: docs/scenarios/connection-leak.md
pool-starvation on unbounded: firing, its condition holding since 2026-12-06T09:02:03Z (2m0s ago)
  pool wait p99 1.8 s
  evidence: pool_wait_p99=1.8 s; waiting_acquires=240 count
  read: docs/scenarios/pool-starvation.md
pending: retry-storm on pipeline since 2026-12-06T09:10:00Z (0s ago), not named until it has held as long as its rule's for
`
	if text.String() != want {
		t.Errorf("text:\n%s\nwant:\n%s", text.String(), want)
	}
}

func TestReadWithNothingFiring(t *testing.T) {
	r, err := Read(context.Background(), http.DefaultClient, fakeProm(t, twoPitfallRules, `{"alerts":[]}`))
	if err != nil || len(r.Findings) != 0 {
		t.Fatalf("Read = %+v, %v", r, err)
	}
	var js, text bytes.Buffer
	if err := WriteJSON(&js, r); err != nil || js.String() != "{\n  \"findings\": []\n}\n" {
		t.Errorf("JSON %q (%v), want an empty list", js.String(), err)
	}
	WriteText(&text, r, "http://p:9090", time.Now())
	if text.String() != "no pitfall: none of the 2 pitfall rules that http://p:9090 loads fires\n" {
		t.Errorf("text %q", text.String())
	}
}

// A Prometheus without the pitfall rules cannot answer: an error, never
// "no pitfall".
func TestReadWithoutPitfallRules(t *testing.T) {
	symptomsOnly := `{"groups":[{"name":"symptoms","rules":[{"type":"alerting","name":"TailLatencyHigh","labels":{"severity":"warning"},"health":"ok"}]}]}`
	_, err := Read(context.Background(), http.DefaultClient, fakeProm(t, symptomsOnly, `{"alerts":[]}`))
	if !errors.Is(err, ErrNoRules) {
		t.Errorf("Read = %v, want ErrNoRules", err)
	}
}

// What is not Prometheus' API is an error that says what came back.
func TestReadRefusesOtherAnswers(t *testing.T) {
	for name, h := range map[string]http.HandlerFunc{
		"an HTML page": func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("<html>Grafana</html>")) },
		"an API error": func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"status":"error","errorType":"unavailable","error":"rule manager not ready"}`))
		},
		"a wrong data shape": func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(`{"status":"success","data":{"groups":"none"}}`))
		},
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(h)
			defer srv.Close()
			_, err := Read(context.Background(), http.DefaultClient, srv.URL)
			if err == nil || !strings.Contains(err.Error(), "/api/v1/rules") {
				t.Errorf("Read = %v, want an error naming the request", err)
			}
		})
	}
}
