package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/orderlab/orderlab/internal/cli"
)

// fakePrometheus answers the two requests of lab diagnose with rules and
// alerts (each the API envelope's data).
func fakePrometheus(t *testing.T, rules, alerts string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data := map[string]string{"/api/v1/rules": rules, "/api/v1/alerts": alerts}[r.URL.Path]
		if data == "" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(`{"status":"success","data":` + data + `}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

const onePitfallRule = `{"groups":[{"rules":[{"type":"alerting","name":"PitfallPoolStarvation","labels":{"pitfall":"pool-starvation"},"health":"ok"}]}]}`

func TestDiagnoseExitCodes(t *testing.T) {
	firing := `{"alerts":[{"labels":{"pitfall":"pool-starvation","service":"unbounded"},"annotations":{"evidence":"pool_wait_p99=1.8 s","runbook_url":"docs/scenarios/pool-starvation.md"},"state":"firing","activeAt":"2026-12-06T09:00:00Z"}]}`
	pending := `{"alerts":[{"labels":{"pitfall":"pool-starvation","service":"unbounded"},"annotations":{},"state":"pending","activeAt":"2026-12-06T09:00:00Z"}]}`
	closed := closedPort(t)
	for _, c := range []struct {
		name        string
		args        []string
		code        int
		out, err    string // substrings of stdout and stderr
		exactStdout string
	}{
		{name: "firing, JSON", args: []string{"-json", "-prometheus", fakePrometheus(t, onePitfallRule, firing)}, code: cli.ExitFail,
			exactStdout: `{
  "findings": [
    {
      "pitfall": "pool-starvation",
      "service": "unbounded",
      "since": "2026-12-06T09:00:00Z",
      "evidence": [
        {
          "signal": "pool_wait_p99",
          "value": 1.8,
          "unit": "s"
        }
      ],
      "page": "docs/scenarios/pool-starvation.md"
    }
  ]
}
`},
		{name: "firing, text", args: []string{"-prometheus", fakePrometheus(t, onePitfallRule, firing)}, code: cli.ExitFail,
			out: "pool-starvation on unbounded: firing"},
		{name: "pending only", args: []string{"-prometheus", fakePrometheus(t, onePitfallRule, pending)}, code: cli.ExitOK,
			out: "no pitfall: none of the 1 pitfall rules"},
		{name: "pending only, JSON", args: []string{"-prometheus", fakePrometheus(t, onePitfallRule, pending), "-json"}, code: cli.ExitOK,
			exactStdout: "{\n  \"findings\": []\n}\n"},
		{name: "no pitfall rules", args: []string{"-prometheus", fakePrometheus(t, `{"groups":[]}`, `{"alerts":[]}`)}, code: cli.ExitUsage,
			err: "no pitfall rule loaded"},
		{name: "nothing listening", args: []string{"-prometheus", "http://" + closed}, code: cli.ExitUsage,
			err: "lab diagnose: cannot ask http://" + closed},
		{name: "bad URL", args: []string{"-prometheus", "127.0.0.1:9090"}, code: cli.ExitUsage, err: "-prometheus: want http(s)://host:port"},
		{name: "an argument", args: []string{"pool-starvation"}, code: cli.ExitUsage, err: "diagnose takes no arguments"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, append([]string{"diagnose"}, c.args...)...)
			if code != c.code || !strings.Contains(stdout, c.out) || !strings.Contains(stderr, c.err) ||
				(c.exactStdout != "" && stdout != c.exactStdout) {
				t.Errorf("exit %d (want %d)\nstdout:\n%s\nstderr:\n%s", code, c.code, stdout, stderr)
			}
		})
	}
}

// The lab's Prometheus is the default: from the host as compose publishes
// it, inside compose by its name.
func TestDiagnoseDefaultsToTheLabsPrometheus(t *testing.T) {
	p, err := parseDiagnose(nil, func(string) string { return "" }, &strings.Builder{})
	if err != nil || p.prometheus != "http://127.0.0.1:9090" {
		t.Errorf("from the host: %+v, %v", p, err)
	}
	p, err = parseDiagnose(nil, func(k string) string { return map[string]string{labEnv: "compose"}[k] }, &strings.Builder{})
	if err != nil || p.prometheus != "http://prometheus:9090" {
		t.Errorf("inside compose: %+v, %v", p, err)
	}
}

// closedPort is a loopback address where nothing listens any more.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}
