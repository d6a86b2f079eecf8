//go:build labcheck

package e2e

// The lab's background load: started as compose.yaml runs it, then the board
// as a user first opens it. See TestLab.

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/types"

	"github.com/orderlab/orderlab/internal/proc"
	"github.com/orderlab/orderlab/lab/local"
)

// backgroundAlone is how long the background load runs alone before the
// board is read: what a user sees half a minute after the lab is up.
const backgroundAlone = 30 * time.Second

// startBackground runs the compose service "background" from bins: its
// command and environment as compose.yaml gives them, with each service URL
// pointed at the local service and its listener at a free loopback port,
// which it returns. It stops when the test ends.
func startBackground(t *testing.T, project *types.Project, bins string, services map[string]*local.Service) string {
	t.Helper()
	svc, ok := project.Services["background"]
	if !ok {
		t.Fatal("compose.yaml: no background service")
	}
	if !runsLabImage(project, svc) {
		t.Fatal("compose.yaml: background must be the lab's image (build arg SERVICE=lab)")
	}
	addrs, err := proc.LoopbackAddrs(1)
	if err != nil {
		t.Fatal(err)
	}
	args := make([]string, 0, len(svc.Command))
	targets := 0
	for _, arg := range svc.Command {
		name, target, isTarget := strings.Cut(arg, "=")
		switch {
		case strings.HasPrefix(arg, "-listen="):
			arg = "-listen=" + addrs[0]
		case isTarget && !strings.HasPrefix(arg, "-"):
			s, ok := services[name]
			if !ok || !strings.Contains(target, "//"+name+":") {
				t.Fatalf("compose.yaml: background loads %s, which is not the e2e's %s service", arg, name)
			}
			arg = name + "=" + s.URL
			targets++
		}
		args = append(args, arg)
	}
	if targets != len(modelServices) || !strings.Contains(strings.Join(args, " "), addrs[0]) {
		t.Fatalf("compose.yaml: background's command %v: want -listen=... and the %d services as name=URL", svc.Command, len(modelServices))
	}
	env := proc.BaseEnv()
	for k, v := range svc.Environment {
		if v != nil {
			env = append(env, k+"="+*v)
		}
	}
	startProc(t, "background", filepath.Join(bins, "lab"), args, env)
	t.Logf("background: lab %s", strings.Join(args, " "))
	return addrs[0]
}

// backgroundAlone: with nothing but the background load, half a minute
// after the start, every panel of the board has data (for each service it
// is drawn for), read with the $__rate_interval Grafana uses for the
// board's default range, and the background's own count lands under each
// service's job.
func (run *labRun) backgroundAlone(t *testing.T) {
	time.Sleep(backgroundAlone)
	now := time.Now()
	rateInterval := grafanaRateInterval(t)

	counted, err := run.api.byJob(run.ctx, `sum by (job) (rate(orderlab_background_requests_total{outcome="ok"}[`+backgroundAlone.String()+`]))`, now)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range modelServices {
		if !(counted[name] > 0) {
			t.Errorf("the background's successes under job %q: %v/s, want some (honor_labels keeps the job the background names)", name, counted[name])
		}
	}

	panels, pooler := 0, 0
	for _, b := range run.boards {
		for _, p := range allPanels(b) {
			if len(p.Targets) == 0 {
				continue // a row
			}
			// The PgBouncer row reads only PgBouncer's exporter, which
			// runs with compose's pgbouncer profile, not here: make
			// lab-test checks its queries behind a real PgBouncer.
			if readsOnlyPgBouncer(p) {
				pooler++
				continue
			}
			// The pitfall alerts that fire: none is how a healthy lab
			// looks, so its query must evaluate, and shows what fires.
			if firesPitfalls(p) {
				for _, tg := range p.Targets {
					samples, err := run.api.query(run.ctx, substituteRate(tg.Expr, strings.Join(modelServices, "|"), rateInterval), now)
					if err != nil {
						t.Errorf("%q: %v", p.Title, err)
					}
					t.Logf("%q with the background load alone: %d pitfall alerts firing %v", p.Title, len(samples), samples)
				}
				continue
			}
			panels++
			for _, svc := range serviceValues(boardTarget{Repeat: p.Repeat}) {
				if err := run.panelHasData(p, svc, rateInterval, now); err != nil {
					t.Errorf("%q ($service=%s): %v", p.Title, svc, err)
				}
			}
		}
	}
	t.Logf("%d panels read after %s of background load alone ($__rate_interval %s); %d of the PgBouncer row left to make lab-test",
		panels, backgroundAlone, rateInterval, pooler)
}

// readsOnlyPgBouncer says whether every query of p reads PgBouncer's
// exporter (pgbouncer_*) and nothing else.
func readsOnlyPgBouncer(p panel) bool {
	for _, tg := range p.Targets {
		if !strings.Contains(tg.Expr, "pgbouncer_") || strings.Contains(tg.Expr, "orderlab_") {
			return false
		}
	}
	return len(p.Targets) > 0
}

// panelHasData reports why panel p would say "No data" for $service=svc: no
// query returns a finite value.
func (run *labRun) panelHasData(p panel, svc, rateInterval string, now time.Time) error {
	var empty []string
	for _, tg := range p.Targets {
		expr := substituteRate(tg.Expr, svc, rateInterval)
		samples, err := run.api.query(run.ctx, expr, now)
		if err != nil {
			return fmt.Errorf("%s: %v\n  %s", tg.RefID, err, expr)
		}
		for _, s := range samples {
			if !math.IsNaN(s.Value) && !math.IsInf(s.Value, 0) {
				return nil
			}
		}
		empty = append(empty, tg.RefID+": "+expr)
	}
	return fmt.Errorf("no query returns a value:\n  %s", strings.Join(empty, "\n  "))
}

// grafanaRateInterval is the $__rate_interval Grafana gives the board's
// panels at its default range: max($__interval + scrape, 4 × scrape), where
// the scrape interval is the datasource's timeInterval and $__interval, 15
// minutes over a panel's width in pixels, is below the timeInterval, its
// floor. So 4 × timeInterval.
func grafanaRateInterval(t *testing.T) string {
	t.Helper()
	for _, ds := range readDatasources(t) {
		if ds.Type != "prometheus" {
			continue
		}
		scrape, err := time.ParseDuration(ds.JSONData.TimeInterval)
		if err != nil {
			t.Fatalf("datasource %s: timeInterval: %v", ds.UID, err)
		}
		return (4 * scrape).String()
	}
	t.Fatal("no Prometheus datasource")
	return ""
}
