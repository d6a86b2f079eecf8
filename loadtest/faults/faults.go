// Package faults measures what the services do when their database fails
// (make faults, docs/reference/database-failures.md). For each fault of the
// Catalog and each service, it starts the service from bin/ (loadtest/lab)
// against a database on a throwaway cluster (internal/pgcluster), through
// an in-process toxiproxy (internal/faultproxy) when the fault is the
// network's; sends a steady load of keyed orders (internal/ledger); injects
// the fault and lifts it; and holds every answer to the table. A Result is
// one row of the reliability tables of docs/reference/database-failures.md (Markdown).
//
// It talks to the services over HTTP only, and to Postgres as an operator
// would: it imports nothing from services/.
package faults

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/orderlab/orderlab/internal/faultproxy"
	"github.com/orderlab/orderlab/internal/ledger"
	"github.com/orderlab/orderlab/internal/pgcluster"
	"github.com/orderlab/orderlab/internal/pgdb"
	"github.com/orderlab/orderlab/loadtest/lab"
)

// Fault is one way for the database to fail.
type Fault struct {
	Name string // kill-backends, restart, ...
	What string // what is done, for the table's heading
	// Proxy: the service reaches Postgres through the proxy, which the
	// fault uses.
	Proxy bool
	// Inject starts the fault; Hold later, Lift ends it (nil: the fault
	// ends when Inject returns).
	Inject, Lift func(ctx context.Context, r *run) error
	Hold         time.Duration
}

// Catalog is every fault, in the order they run.
var Catalog = []Fault{
	{Name: "kill-backends", What: "Every backend of the service killed at once with pg_terminate_backend",
		Inject: func(ctx context.Context, r *run) error { return r.kill(ctx) }},
	{Name: "restart", What: "Postgres restarted: pg_ctl stop -m fast, then start",
		Inject: func(ctx context.Context, r *run) error { return r.cluster.Restart(ctx) }},
	{Name: "outage-3s", What: "Postgres stopped (pg_ctl stop -m fast) for 3 s, then started",
		Inject: func(ctx context.Context, r *run) error { return r.cluster.Stop(ctx) },
		Hold:   3 * time.Second,
		Lift:   func(ctx context.Context, r *run) error { return r.cluster.Start(ctx) }},
	{Name: "blackhole", What: "Every packet between service and Postgres dropped for 3 s, no reset (toxiproxy timeout)", Proxy: true,
		Inject: func(_ context.Context, r *run) error { return r.proxy.Blackhole() },
		Hold:   3 * time.Second,
		Lift:   clearProxy},
	{Name: "latency-50ms", What: "50 ms more per round trip for 5 s (toxiproxy latency, 25 ms each way)", Proxy: true,
		Inject: func(_ context.Context, r *run) error { return r.proxy.Latency(25 * time.Millisecond) },
		Hold:   5 * time.Second,
		Lift:   clearProxy},
}

// Config says what to run.
type Config struct {
	BinDir   string   // the built services (make build)
	Services []string // unbounded, semaphore, pipeline
	Faults   []Fault
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
	Sent           int
	Answers        map[string]int // by ledger.Answer.Label
	// Failed counts the answers that were not a success. Recovery is the
	// time from the end of the fault to the sending of the last order
	// that failed (0 when every order sent after it succeeded); with no
	// failure at all, Failed is 0 and Recovery means nothing.
	Failed   int
	Recovery time.Duration
	// The table against the answers (ledger.Audit): each must be 0.
	Missing, Duplicates, Stored int
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

// run is one service under one fault.
type run struct {
	cluster *pgcluster.Cluster
	proxy   *faultproxy.Proxy
	db      *pgdb.Database
	appName string
}

func (r *run) kill(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, r.db.URL)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var n int
	err = conn.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = $1 AND datname = current_database()`, r.appName).Scan(&n)
	if err == nil && n == 0 {
		err = errors.New("no backend of the service to kill")
	}
	return err
}

func runOne(ctx context.Context, cfg Config, cluster *pgcluster.Cluster, f Fault, svc string) (Result, error) {
	res := Result{Fault: f.Name, Service: svc}
	db, err := pgdb.Create(ctx, cluster.URL, "orderlab_faults")
	if err != nil {
		return res, err
	}
	defer func() { _ = db.Drop(context.WithoutCancel(ctx)) }()
	r := &run{cluster: cluster, db: db, appName: "orderlab-" + svc}
	serviceURL := db.URL
	if f.Proxy {
		u, err := url.Parse(db.URL)
		if err != nil {
			return res, err
		}
		if r.proxy, err = faultproxy.New(u.Host); err != nil {
			return res, err
		}
		defer r.proxy.Close()
		u.Host = r.proxy.Addr
		serviceURL = u.String()
	}
	env := map[string]string{}
	maps.Copy(env, cfg.Env)
	if err := os.MkdirAll(cfg.LogDir, 0o755); err != nil {
		return res, err
	}
	l, err := lab.Start(ctx, lab.Config{
		BinDir: cfg.BinDir, Services: []string{svc}, Env: env, Database: serviceURL,
		LogDir: filepath.Join(cfg.LogDir, f.Name),
	})
	if err != nil {
		return res, err
	}
	defer func() { _ = l.Stop() }()

	load := ledger.Start(l.Services[0].URL+"/orders", f.Name+"-"+svc, cfg.Rate, 0)
	sleep(ctx, cfg.Before)
	if err := f.Inject(ctx, r); err != nil {
		load.Finish()
		return res, fmt.Errorf("inject: %w", err)
	}
	if f.Lift != nil {
		sleep(ctx, f.Hold)
		if err := f.Lift(ctx, r); err != nil {
			load.Finish()
			return res, fmt.Errorf("lift: %w", err)
		}
	}
	ended := time.Now()
	sleep(ctx, cfg.After)
	as := load.Finish()

	res.Sent, res.Answers = len(as), ledger.Tally(as)
	for _, a := range as {
		if a.Success() {
			continue
		}
		res.Failed++
		if d := a.Sent.Sub(ended); d > res.Recovery {
			res.Recovery = d
		}
	}
	conn, err := pgx.Connect(ctx, db.URL)
	if err != nil {
		return res, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	au, err := ledger.Check(ctx, conn, as)
	if err != nil {
		return res, err
	}
	res.Missing, res.Duplicates, res.Stored = len(au.Missing), len(au.Duplicates), len(au.Stored)
	return res, ctx.Err()
}

func clearProxy(_ context.Context, r *run) error {
	r.proxy.Clear()
	return nil
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
