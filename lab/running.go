package main

import (
	"cmp"
	"flag"
	"fmt"
	"net/url"
	"strings"

	"github.com/orderlab/orderlab/internal/cli"
	"github.com/orderlab/orderlab/lab/dbproxy"
	"github.com/orderlab/orderlab/lab/scenario/runner"
	"github.com/orderlab/orderlab/lab/scenario/setup"
	"github.com/orderlab/orderlab/loadtest/annotate"
)

// labEnv is set by compose on its front, lab and loadtest services (compose.yaml): there
// `lab scenario NAME` runs against the lab by the services' names,
// with no flag (docs/lab-scenarios.md).
const labEnv = "ORDERLAB_LAB"

// boardUID is the lab's board (grafana/board, PoolStarvationUID; a test
// holds them equal).
const boardUID = "orderlab-pool-starvation"

// labBoard is the board as a browser on the host opens it, from the host
// or from inside compose alike (compose publishes Grafana on this port).
const labBoard = "http://127.0.0.1:3000/d/" + boardUID

// labToken is the ADMIN_TOKEN compose gives the services when .env sets
// none (compose.yaml); ADMIN_TOKEN in the environment replaces it.
const labToken = "orderlab-admin"

// labProxyHost is the database proxy's name in compose, by which the
// services' LAB_DATABASE_URL reaches it (compose.yaml, profile dbproxy).
const labProxyHost = "dbproxy"

// inCompose reports whether this lab runs in compose (its front, lab or
// loadtest service).
func inCompose(getenv func(string) string) bool { return getenv(labEnv) == "compose" }

// labPrometheus is the lab's Prometheus: by its name inside compose, else
// where compose publishes it.
func labPrometheus(getenv func(string) string) string {
	if inCompose(getenv) {
		return "http://prometheus:9090"
	}
	return "http://127.0.0.1:9090"
}

// useLab points l at the running lab: inside compose by the services'
// names, from the host by compose's published ports (the same as `make
// run`'s); each phase's knobs go through the services' admin listeners
// with the lab's token, r annotates each phase on the board and asks the
// lab's Prometheus which pitfall alerts fire after each target's run.
func useLab(r *runner.Runner, l *setup.Lab, getenv func(string) string) error {
	compose := inCompose(getenv)
	l.Endpoints = map[string]setup.Endpoint{}
	for _, s := range cli.LocalServices {
		ep := setup.Endpoint{URL: s.URL, MetricsURL: s.Metrics, AdminURL: strings.TrimSuffix(s.Metrics, "/metrics")}
		if compose {
			admin := "http://" + s.Name + ":9090"
			ep = setup.Endpoint{URL: "http://" + s.Name + ":8080", MetricsURL: admin + "/metrics", AdminURL: admin}
		}
		l.Endpoints[s.Name] = ep
	}
	// Service names are not loopback addresses: remote targets are allowed
	// inside compose only.
	l.AllowRemote = compose
	l.Token = cmp.Or(getenv("ADMIN_TOKEN"), labToken)
	grafana := getenv("GRAFANA_URL")
	if grafana == "" && !compose {
		grafana = "http://admin:" + cmp.Or(getenv("GRAFANA_ADMIN_PASSWORD"), "orderlab") + "@127.0.0.1:3000"
	}
	c, err := annotate.New(grafana)
	if err != nil {
		return fmt.Errorf("-lab: %w", err)
	}
	r.Annotate, r.Board, r.Prometheus = c, labBoard, labPrometheus(getenv)
	// The lab's Postgres straight, as compose.yaml publishes it, for
	// db_stop's ledger check.
	proxy, db := "http://127.0.0.1:9094", "127.0.0.1:"+cmp.Or(getenv("POSTGRES_PORT"), "5433")
	if compose {
		proxy, db = "http://dbproxy:9090", "postgres:5432"
	}
	db = "postgres://orderlab:" + url.QueryEscape(cmp.Or(getenv("POSTGRES_PASSWORD"), "orderlab")) + "@" + db + "/orderlab?sslmode=disable"
	l.DBProxy = &setup.LabProxy{Control: &dbproxy.Client{URL: proxy}, Host: labProxyHost, Database: db}
	return nil
}

// proxyFlags are -dbproxy, -dbproxy-host and -lab-db: the database proxy
// through which a run makes db_latency and db_stop, for lab scenario
// and lab front alike.
type proxyFlags struct{ control, host, db *string }

func addProxyFlags(fs *flag.FlagSet) proxyFlags {
	return proxyFlags{
		control: fs.String("dbproxy", "", "`URL` of the database proxy's control API (-lab: the lab's)"),
		db:      fs.String("lab-db", "", "`URL` of the lab's database straight, where db_stop's keyed orders are checked (-lab: the lab's Postgres)"),
		host:    fs.String("dbproxy-host", "", "`host[:port]` by which the services' DATABASE_URL reaches the database proxy (-lab: dbproxy)"),
	}
}

// apply sets l.DBProxy from the flags given, over what useLab set (l nil:
// a local run, which has no proxy: the flags are checked, then unused).
func (f proxyFlags) apply(l *setup.Lab) error {
	if *f.control == "" && *f.host == "" && *f.db == "" {
		return nil
	}
	if l == nil {
		l = &setup.Lab{}
	}
	if l.DBProxy == nil {
		l.DBProxy = &setup.LabProxy{Host: labProxyHost}
	}
	if *f.control != "" {
		l.DBProxy.Control = &dbproxy.Client{URL: *f.control}
	}
	l.DBProxy.Host = cmp.Or(*f.host, l.DBProxy.Host)
	l.DBProxy.Database = cmp.Or(*f.db, l.DBProxy.Database)
	if l.DBProxy.Control == nil {
		return cli.Usagef("dbproxy", "-dbproxy-host and -lab-db need -dbproxy URL (or -lab)")
	}
	return nil
}
