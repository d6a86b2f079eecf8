package setup

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/orderlab/orderlab/internal/dbfault"
	"github.com/orderlab/orderlab/internal/ledger"
	"github.com/orderlab/orderlab/lab/dbproxy"
	"github.com/orderlab/orderlab/lab/scenario"
	"github.com/orderlab/orderlab/lab/scenario/result"
	"github.com/orderlab/orderlab/loadtest/measure"
)

// Outage is what a db_stop acts on: the fault, its target, and the
// database whose orders table the keyed orders are held to.
type Outage struct {
	fault dbfault.Fault
	tg    dbfault.Target
	dbURL string
	said  string // logged once the fault holds: what was done
	log   io.Writer
}

// localOutage stops the local run's own cluster (be.cluster).
func localOutage(be *backend, hold time.Duration) Outage {
	return Outage{fault: dbfault.Outage(hold), tg: dbfault.Target{Cluster: be.cluster, DBURL: be.db.URL}, dbURL: be.db.URL,
		said: "Postgres stopped", log: be.log}
}

// labOutage cuts the lab's Postgres off through the lab's database proxy
// (down, then none): a proxy outage, not a restart of Postgres.
func labOutage(px *LabProxy, hold time.Duration, log io.Writer) Outage {
	cut := func(ctx context.Context, down bool) error {
		f := dbproxy.Fault{Fault: "none"}
		if down {
			f.Fault = "down"
		}
		return px.Control.Set(ctx, f)
	}
	return Outage{fault: dbfault.ProxyOutage(hold, cut), dbURL: px.Database,
		said: "the lab's database proxy cut every connection to Postgres (Postgres keeps running)", log: log}
}

// RunningOutage is a db_stop beside a target's run (Outage.Start).
type RunningOutage struct {
	of     Outage
	target string
	began  time.Time
	load   *ledger.Load
	done   chan struct{}
	tl     dbfault.Timeline
	err    error
}

// Start runs a db_stop beside a target's run: it sends keyed orders to
// apiURL from now until Finish is called, applies the fault After into the
// run for For (dbfault.Apply), and lifts it.
func (of Outage) Start(ctx context.Context, stop scenario.DBStop, target, phase, apiURL string) *RunningOutage {
	o := &RunningOutage{of: of, target: target, began: time.Now(), done: make(chan struct{})}
	o.load = ledger.Start(apiURL+"/orders", fmt.Sprintf("%s-%s-%d", phase, target, o.began.UnixNano()), stop.Ledger, 0)
	go func() {
		defer close(o.done)
		if !measure.Sleep(ctx, stop.After.D()) {
			return
		}
		o.tl, o.err = dbfault.Apply(context.WithoutCancel(ctx), of.fault, of.tg, func() {
			fmt.Fprintf(of.log, "   %s %s into the run, for %s\n", of.said, time.Since(o.began).Round(10*time.Millisecond), stop.For.D())
		})
	}()
	return o
}

// Finish waits for the fault to be lifted, stops the keyed orders and
// holds their answers to the table.
func (o *RunningOutage) Finish(ctx context.Context) result.OutageResult {
	<-o.done
	as := o.load.Finish()
	res := result.OutageResult{Target: o.target, How: o.of.fault.What, Summary: dbfault.Summary{Sent: len(as), Answers: ledger.Count(as)}}
	if o.err != nil {
		res.Err = o.err.Error()
		return res
	}
	for _, a := range as {
		sec := int(a.Sent.Sub(o.began) / time.Second)
		for len(res.BySecond) <= sec {
			res.BySecond = append(res.BySecond, ledger.Tally{})
		}
		res.BySecond[sec][a.Label()]++
	}
	if !o.tl.On.IsZero() {
		res.Stopping = o.tl.Asked.Sub(o.began).Seconds()
		res.Stopped = o.tl.On.Sub(o.began).Seconds()
		res.Started = o.tl.Lifted.Sub(o.began).Seconds()
	}
	conn, err := pgx.Connect(ctx, o.of.dbURL)
	if err != nil {
		res.Err = err.Error()
		return res
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if res.Summary, _, err = dbfault.Summarize(ctx, conn, as, o.tl); err != nil {
		res.Err = err.Error()
	}
	res.RecoverySeconds = res.Recovery.Seconds()
	return res
}
