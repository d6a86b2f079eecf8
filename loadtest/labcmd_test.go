package main

import (
	"io"
	"strings"
	"testing"

	"github.com/orderlab/orderlab/grafana/board"
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
		r := p.runner
		ep := r.Endpoints["semaphore"]
		if ep.URL != c.api || ep.AdminURL != c.admin || ep.MetricsURL != c.admin+"/metrics" || r.Token != c.token ||
			r.AllowRemote != c.remote || r.Annotate == nil || !strings.HasSuffix(r.Board, "/d/"+board.PoolStarvationUID) {
			t.Errorf("env %v, args %q: endpoint %+v, token %q, remote %v, annotate %v, board %q", c.env, c.args, ep, r.Token, r.AllowRemote, r.Annotate != nil, r.Board)
		}
	}
	if _, err := parseScenarioCmd([]string{"-lab", "-target", "semaphore=http://127.0.0.1:1", "pool-starvation"},
		func(string) string { return "" }, io.Discard); err == nil || !strings.Contains(err.Error(), "no -target") {
		t.Errorf("-lab with -target: %v, want a usage error", err)
	}
	p, err := parseScenarioCmd([]string{"pool-starvation"}, func(string) string { return "" }, io.Discard)
	if err != nil || p.runner.Endpoints != nil || p.runner.AllowRemote {
		t.Errorf("without -lab outside compose: endpoints %v, remote %v, %v; want a local run", p.runner.Endpoints, p.runner.AllowRemote, err)
	}
}
