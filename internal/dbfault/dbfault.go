// Package dbfault is the one catalog of the ways the database fails under
// a service (docs/reference/database-failures.md) and the one fault run: a
// steady load of keyed orders (internal/ledger), the fault injected, held
// and lifted, and a Summary of the answers held to the orders table. The
// services' fault suite (services/internal/apptest), `lab faults`
// (make faults) and the scenario runner's db_stop (lab/scenario) all
// run faults through it, under the names of the Catalog.
//
// Faults act on a Target: a throwaway cluster (internal/pgcluster), never
// the machine's server, and an in-process toxiproxy (internal/faultproxy)
// for the network's faults.
package dbfault

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/orderlab/orderlab/internal/faultproxy"
	"github.com/orderlab/orderlab/internal/ledger"
	"github.com/orderlab/orderlab/internal/pgcluster"
)

// Target is what a fault acts on: one service's database.
type Target struct {
	Cluster *pgcluster.Cluster // the service's Postgres
	// Proxy stands between the service and Postgres; the network's faults
	// (Fault.Proxy) need it.
	Proxy *faultproxy.Proxy
	// DBURL reaches the service's database straight (not through Proxy),
	// as an operator would: kill-backends ends the sessions from there.
	DBURL   string
	AppName string // the service's application_name: orderlab-<model>
}

// Fault is one way for the database to fail.
type Fault struct {
	Name string // kill-backends, restart, outage-3s, ...
	What string // what is done: the heading of its reliability table
	// Proxy: the service must reach Postgres through Target.Proxy.
	Proxy bool
	// Hold is how long the fault lasts before it is lifted; 0 when it is
	// over once injected (a kill, a restart).
	Hold         time.Duration
	inject, lift func(ctx context.Context, tg Target) error
}

// The catalog, in the order make faults runs it.
var (
	KillBackends = Fault{Name: "kill-backends", What: "Every backend of the service killed at once with pg_terminate_backend",
		inject: killBackends}
	Restart = Fault{Name: "restart", What: "Postgres restarted: pg_ctl stop -m fast, then start",
		inject: func(ctx context.Context, tg Target) error { return tg.Cluster.Restart(ctx) }}
	Outage3s  = Outage(3 * time.Second)
	Blackhole = Fault{Name: "blackhole", What: "Every packet between service and Postgres dropped for 3 s, no reset (toxiproxy timeout)",
		Proxy: true, Hold: 3 * time.Second,
		inject: func(_ context.Context, tg Target) error { return tg.Proxy.Blackhole() }, lift: clearProxy}
	Latency50ms = Fault{Name: "latency-50ms", What: "50 ms more per round trip for 5 s (toxiproxy latency, 25 ms each way)",
		Proxy: true, Hold: 5 * time.Second,
		inject: func(_ context.Context, tg Target) error { return tg.Proxy.Latency(25 * time.Millisecond) }, lift: clearProxy}
	ResetPeer = Fault{Name: "reset-peer", What: "Every connection between service and Postgres reset (TCP RST) as soon as it carries data, for 1 s (toxiproxy reset_peer)",
		Proxy: true, Hold: time.Second,
		inject: func(_ context.Context, tg Target) error { return tg.Proxy.ResetPeer() }, lift: clearProxy}

	Catalog = []Fault{KillBackends, Restart, Outage3s, Blackhole, Latency50ms, ResetPeer}
)

// Outage is Postgres stopped (pg_ctl stop -m fast) for hold, then started:
// outage-3s in the catalog, a scenario's db_stop for its own length.
func Outage(hold time.Duration) Fault {
	return Fault{Name: "outage-" + hold.String(), What: fmt.Sprintf("Postgres stopped (pg_ctl stop -m fast) for %s, then started", hold),
		Hold:   hold,
		inject: func(ctx context.Context, tg Target) error { return tg.Cluster.Stop(ctx) },
		lift:   func(ctx context.Context, tg Target) error { return tg.Cluster.Start(ctx) }}
}

// ProxyOutage is Outage made by a proxy the caller drives (the running
// lab's database proxy, lab/dbproxy): cut(ctx, true) closes every
// connection between the services and Postgres and refuses new ones, as a
// stopped Postgres does; cut(ctx, false) lets them through again after
// hold. Postgres itself keeps running: no crash recovery, no lost
// prepared statements beyond the cut connections', no server restart.
func ProxyOutage(hold time.Duration, cut func(ctx context.Context, down bool) error) Fault {
	return Fault{Name: "proxy-outage-" + hold.String(),
		What:   fmt.Sprintf("Every connection to Postgres cut and new ones refused by a proxy for %s, then let through (Postgres keeps running)", hold),
		Hold:   hold,
		inject: func(ctx context.Context, _ Target) error { return cut(ctx, true) },
		lift:   func(ctx context.Context, _ Target) error { return cut(ctx, false) }}
}

// Named finds a fault of the catalog by name.
func Named(name string) (Fault, bool) {
	for _, f := range Catalog {
		if f.Name == name {
			return f, true
		}
	}
	return Fault{}, false
}

func killBackends(ctx context.Context, tg Target) error {
	conn, err := pgx.Connect(ctx, tg.DBURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var n int
	err = conn.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = $1 AND datname = current_database()`, tg.AppName).Scan(&n)
	if err == nil && n == 0 {
		err = errors.New("no backend of the service to kill: the fault did not happen")
	}
	return err
}

func clearProxy(_ context.Context, tg Target) error {
	tg.Proxy.Clear()
	return nil
}

// Timeline is when a fault was asked for, in effect, and lifted (for a
// fault without a hold, in effect and lifted are when it was done).
type Timeline struct {
	Asked, On, Lifted time.Time
}

// Apply injects f into tg, holds it for f.Hold and lifts it. during, when
// not nil, runs while the fault holds (checks of what the service answers
// meanwhile); the fault is lifted only after it returns, so that it always
// sees the fault, and lifted even when during ends its goroutine (a test's
// t.Fatal), so that a failed check leaves no fault behind.
func Apply(ctx context.Context, f Fault, tg Target, during func()) (tl Timeline, err error) {
	if f.Proxy && tg.Proxy == nil {
		return Timeline{}, fmt.Errorf("%s: the fault needs a proxy in front of Postgres", f.Name)
	}
	tl.Asked = time.Now()
	if err := f.inject(ctx, tg); err != nil {
		return tl, fmt.Errorf("%s: inject: %w", f.Name, err)
	}
	tl.On = time.Now()
	defer func() {
		if f.lift != nil {
			sleep(ctx, time.Until(tl.On.Add(f.Hold)))
			if lerr := f.lift(context.WithoutCancel(ctx), tg); lerr != nil {
				err = errors.Join(err, fmt.Errorf("%s: lift: %w", f.Name, lerr))
			}
		}
		tl.Lifted = time.Now()
		err = errors.Join(err, ctx.Err())
	}()
	if during != nil {
		during()
	}
	return tl, nil
}

// Run is one fault run: load (a ledger.Load already sending) for before,
// the fault (Apply, with during), load for after, then every answer. On an
// error the load is stopped and its answers are returned with it.
func Run(ctx context.Context, f Fault, tg Target, load *ledger.Load, before, after time.Duration, during func()) (Timeline, []ledger.Answer, error) {
	sleep(ctx, before)
	tl, err := Apply(ctx, f, tg, during)
	if err == nil {
		sleep(ctx, after)
	}
	return tl, load.Finish(), err
}

// sleep waits d or until ctx ends, and says whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
