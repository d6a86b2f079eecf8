package main

import (
	"io"
	"strings"
	"testing"

	"github.com/orderlab/orderlab/grafana/board"
	"github.com/orderlab/orderlab/lab/scenario/setup"
)

func TestLabTargetsAreThePublishedPortsOnTheHostAndTheServiceNamesInCompose(t *testing.T) {
	for _, c := range []struct {
		env               map[string]string
		args              []string
		api, admin, token string
		remote            bool
	}{
		{nil, []string{"-lab", "pool-starvation"}, "http://127.0.0.1:8082", "http://127.0.0.1:9092", labToken, false},
		{map[string]string{"ADMIN_TOKEN": "t0k"}, []string{"-lab", "pool-starvation"}, "http://127.0.0.1:8082", "http://127.0.0.1:9092", "t0k", false},
		{map[string]string{labEnv: "compose", "GRAFANA_URL": "http://admin:x@grafana:3000"}, []string{"pool-starvation"},
			"http://semaphore:8080", "http://semaphore:9090", labToken, true},
	} {
		p, err := parseScenarioCmd(c.args, func(k string) string { return c.env[k] }, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		r, l := p.runner, p.lab
		ep := l.Endpoints["semaphore"]
		if ep.URL != c.api || ep.AdminURL != c.admin || ep.MetricsURL != c.admin+"/metrics" || l.Token != c.token ||
			l.AllowRemote != c.remote || r.Annotate == nil || !strings.HasSuffix(r.Board, "/d/"+board.PoolStarvationUID) || r.Mode != l {
			t.Errorf("env %v, args %q: endpoint %+v, token %q, remote %v, annotate %v, board %q, mode %v", c.env, c.args, ep, l.Token, l.AllowRemote, r.Annotate != nil, r.Board, r.Mode)
		}
	}
	none := func(string) string { return "" }
	// db_stop's ledger reads the lab's Postgres as compose.yaml publishes it.
	for env, want := range map[string]string{
		"":        "postgres://orderlab:orderlab@127.0.0.1:5433/orderlab?sslmode=disable",
		"compose": "postgres://orderlab:orderlab@postgres:5432/orderlab?sslmode=disable",
	} {
		p, err := parseScenarioCmd([]string{"-lab", "db-restart"}, func(k string) string { return map[string]string{labEnv: env}[k] }, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.lab.DBProxy.Database; got != want {
			t.Errorf("%s=%q: the lab's database %q, want %s", labEnv, env, got, want)
		}
	}
	for args, want := range map[string]string{
		"-lab -target semaphore=http://127.0.0.1:1 pool-starvation":                                         "needs -metrics semaphore=URL",
		"-lab -target nosuch=http://127.0.0.1:1 -metrics nosuch=http://127.0.0.1:2/metrics pool-starvation": "the lab's services are",
		"-dbproxy-host 127.0.0.1:1 -target semaphore=http://127.0.0.1:1 pool-starvation":                    "need -dbproxy URL",
		"-prometheus http://127.0.0.1:9090 pool-starvation":                                                 "needs -lab or -target",
	} {
		if _, err := parseScenarioCmd(strings.Fields(args), none, io.Discard); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want a usage error %q", args, err, want)
		}
	}
	// -lab with -target moves one service (the others stay at the lab's
	// ports); -dbproxy and -dbproxy-host move the proxy.
	p, err := parseScenarioCmd([]string{"-lab", "-target", "semaphore=http://127.0.0.1:1", "-metrics", "semaphore=http://127.0.0.1:2/metrics",
		"-dbproxy", "http://127.0.0.1:3", "-dbproxy-host", "127.0.0.1:4", "-lab-db", "postgres://x@127.0.0.1:5/y", "pool-starvation"}, none, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if ep := p.lab.Endpoints["semaphore"]; ep.URL != "http://127.0.0.1:1" || ep.AdminURL != "http://127.0.0.1:2" ||
		p.lab.Endpoints["pipeline"].URL != "http://127.0.0.1:8083" || p.runner.Annotate == nil {
		t.Errorf("-lab -target semaphore=...: endpoints %+v, annotate %v", p.lab.Endpoints, p.runner.Annotate != nil)
	}
	if px := p.lab.DBProxy; px == nil || px.Control.URL != "http://127.0.0.1:3" || px.Host != "127.0.0.1:4" || px.Database != "postgres://x@127.0.0.1:5/y" {
		t.Errorf("-dbproxy: %+v", px)
	}
	// lab front takes the same three, for the same proxy.
	fp, err := parseFront([]string{"-dbproxy", "http://127.0.0.1:3", "-dbproxy-host", "127.0.0.1:4", "-lab-db", "postgres://x@127.0.0.1:5/y"}, none, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if px := fp.cfg.Lab.DBProxy; px == nil || px.Control.URL != "http://127.0.0.1:3" || px.Host != "127.0.0.1:4" || px.Database != "postgres://x@127.0.0.1:5/y" {
		t.Errorf("front -dbproxy: %+v", px)
	}
	p, err = parseScenarioCmd([]string{"pool-starvation"}, none, io.Discard)
	if _, local := p.runner.Mode.(setup.Local); err != nil || p.lab != nil || !local {
		t.Errorf("without -lab outside compose: lab %+v, mode %v, %v; want a local run", p.lab, p.runner.Mode, err)
	}
}
