// Package faults measures what the services do when their database fails
// (make faults, docs/reference/database-failures.md). For each fault of the
// catalog (internal/dbfault) and each service, it starts the service from
// bin/ (lab/local) against a database on a throwaway cluster
// (internal/pgcluster), through an in-process toxiproxy
// (internal/faultproxy) when the fault is the network's, and runs the
// fault (dbfault.Run: keyed orders before, during and after it, every
// answer held to the table). A Result is one row of the reliability tables
// of docs/reference/database-failures.md (Markdown).
//
// It talks to the services over HTTP only, and to Postgres as an operator
// would: it imports nothing from services/.
package faults

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/orderlab/orderlab/internal/dbfault"
	"github.com/orderlab/orderlab/internal/faultproxy"
	"github.com/orderlab/orderlab/internal/ledger"
	"github.com/orderlab/orderlab/internal/pgcluster"
	"github.com/orderlab/orderlab/internal/pgdb"
	"github.com/orderlab/orderlab/lab/local"
)

// Config says what to run.
type Config struct {
	BinDir   string   // the built services (make build)
	Services []string // unbounded, semaphore, pipeline
	Faults   []dbfault.Fault
	Rate     int // keyed orders per second
	// Before is the load before the fault, After the load after it ends.
	Before, After time.Duration
	Env           map[string]string // every service gets it
	LogDir        string            // the services' logs
	Progress      io.Writer         // a line per run
}

// Result is one service under one fault.
type Result struct {
	Fault, Service string
	dbfault.Summary
}

// Run runs every fault against every service, one at a time.
func Run(ctx context.Context, cfg Config) ([]Result, error) {
	cluster, err := pgcluster.New(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = cluster.Destroy(context.WithoutCancel(ctx)) }()
	var out []Result
	for _, f := range cfg.Faults {
		for _, svc := range cfg.Services {
			if cfg.Progress != nil {
				fmt.Fprintf(cfg.Progress, "%s: %s ...\n", f.Name, svc)
			}
			r, err := runOne(ctx, cfg, cluster, f, svc)
			if err != nil {
				return out, fmt.Errorf("%s, %s: %w", f.Name, svc, err)
			}
			out = append(out, r)
		}
	}
	return out, nil
}

func runOne(ctx context.Context, cfg Config, cluster *pgcluster.Cluster, f dbfault.Fault, svc string) (Result, error) {
	res := Result{Fault: f.Name, Service: svc}
	db, err := pgdb.Create(ctx, cluster.URL, "orderlab_faults")
	if err != nil {
		return res, err
	}
	defer func() { _ = db.Drop(context.WithoutCancel(ctx)) }()
	tg := dbfault.Target{Cluster: cluster, DBURL: db.URL, AppName: "orderlab-" + svc}
	serviceURL := db.URL
	if f.Proxy {
		u, err := url.Parse(db.URL)
		if err != nil {
			return res, err
		}
		if tg.Proxy, err = faultproxy.New(u.Host); err != nil {
			return res, err
		}
		defer tg.Proxy.Close()
		u.Host = tg.Proxy.Addr
		serviceURL = u.String()
	}
	if err := os.MkdirAll(cfg.LogDir, 0o755); err != nil {
		return res, err
	}
	l, err := local.Start(ctx, local.Config{
		BinDir: cfg.BinDir, Services: []string{svc}, Env: maps.Clone(cfg.Env), Database: serviceURL,
		LogDir: filepath.Join(cfg.LogDir, f.Name),
	})
	if err != nil {
		return res, err
	}
	defer func() { _ = l.Stop() }()

	load := ledger.Start(l.Services[0].URL+"/orders", f.Name+"-"+svc, cfg.Rate, 0)
	tl, as, err := dbfault.Run(ctx, f, tg, load, cfg.Before, cfg.After, nil)
	if err != nil {
		return res, err
	}
	conn, err := pgx.Connect(ctx, db.URL)
	if err != nil {
		return res, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	res.Summary, _, err = dbfault.Summarize(ctx, conn, as, tl)
	if err != nil {
		return res, err
	}
	return res, ctx.Err()
}
