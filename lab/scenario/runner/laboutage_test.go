//go:build labcheck

package runner

import (
	"context"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/orderlab/orderlab/internal/faultproxy"
	"github.com/orderlab/orderlab/internal/pgdb"
	"github.com/orderlab/orderlab/internal/pgtest"
	"github.com/orderlab/orderlab/lab/dbproxy"
	"github.com/orderlab/orderlab/lab/knobs"
	"github.com/orderlab/orderlab/lab/local"
	"github.com/orderlab/orderlab/lab/scenario"
	"github.com/orderlab/orderlab/lab/scenario/setup"
)

// TestLabRunMakesDBRestartAnOutageOfTheLabsProxy runs db-restart (quick)
// against a real unbounded that reaches the real Postgres through the
// lab's database proxy (lab/dbproxy on internal/faultproxy), as -lab
// runs it: the proxy cuts every connection and refuses new ones for the
// stop's length, the keyed orders are answered 503 database-unavailable
// meanwhile and succeed again after, the orders table backs every answer,
// and the proxy and the knobs are as they were afterwards.
func TestLabRunMakesDBRestartAnOutageOfTheLabsProxy(t *testing.T) {
	bin := buildServices(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	db, err := pgdb.Create(ctx, pgtest.BaseURL(), "orderlab_scn_lab_outage")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Drop(context.WithoutCancel(ctx)) }()
	u, err := url.Parse(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	px, err := faultproxy.New(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	ctl := httptest.NewServer(dbproxy.NewServer(px))
	defer ctl.Close()
	u.Host = px.Addr
	running, err := local.Start(ctx, local.Config{BinDir: bin, Services: []string{"unbounded"}, Env: labEnv, Database: u.String(), LogDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = running.Stop() }()
	svc := running.Services[0]
	admin := strings.TrimSuffix(svc.MetricsURL, "/metrics")
	data, err := os.ReadFile("../catalog/db-restart.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := scenario.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	s.Targets = []string{"unbounded"}
	proxy := &dbproxy.Client{URL: ctl.URL}
	r := &Runner{Mode: &setup.Lab{Endpoints: map[string]setup.Endpoint{"unbounded": {URL: svc.URL, MetricsURL: svc.MetricsURL, AdminURL: admin}},
		Token: labEnv["ADMIN_TOKEN"], DBProxy: &setup.LabProxy{Control: proxy, Host: px.Addr, Database: db.URL}},
		Quick: true, Out: t.TempDir(), Log: testWriter{t}}
	res, _, err := r.Run(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	outs := res.Phases[0].Outages
	if len(outs) != 1 {
		t.Fatalf("%d outages, want 1", len(outs))
	}
	o := outs[0]
	if o.Err != "" || o.Started <= o.Stopped || !strings.Contains(o.How, "proxy") ||
		o.Answers["503 database-unavailable"] == 0 || o.Answers["500"] > 0 {
		t.Errorf("outage %+v: want the proxy's cut and its lift, 503 database-unavailable meanwhile, no 500", o)
	}
	if o.Missing+o.Duplicates+o.Stored > 0 {
		t.Errorf("the table disagrees with the answers: %d missing, %d twice, %d stored despite the answer", o.Missing, o.Duplicates, o.Stored)
	}
	if !o.Recovered {
		t.Errorf("no keyed order sent after the proxy let connections through succeeded (answers by second %v)", o.BySecond)
	}
	if f, err := proxy.Get(ctx); err != nil || f.Fault != "none" {
		t.Errorf("the proxy after the run: %+v, %v; want none", f, err)
	}
	kc := &knobs.Client{Admin: admin}
	if err := kc.Wait(ctx, map[string]string{"DB_MAX_CONNS": "20", "REQUEST_TIMEOUT": "30s"}, 5*time.Second); err != nil {
		t.Errorf("the knobs after the run: %v", err)
	}
	if ok, why := scenario.InLab(s); !ok || !strings.Contains(why, "not restarted") {
		t.Errorf("scenario.InLab(db-restart) = %v, %q: want yes, saying the stop is the proxy's outage", ok, why)
	}
}
