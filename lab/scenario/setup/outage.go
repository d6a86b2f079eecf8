package scenario

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/orderlab/orderlab/internal/dbfault"
	"github.com/orderlab/orderlab/internal/ledger"
	"github.com/orderlab/orderlab/lab/dbproxy"
	"github.com/orderlab/orderlab/loadtest/measure"
)

// OutageResult is one target's run through a db_stop: the keyed orders
// sent beside the phase's load (internal/ledger), their answers second by
// second, how long the service took to answer with success again, and what
// the orders table says about every answer (dbfault.Summary).
type OutageResult struct {
	Target string `json:"target"`
	// How the outage was made: Postgres stopped (a local run's cluster) or
	// the lab's database proxy cutting every connection (-lab).
	How string `json:"how,omitempty"`
	// Stopping, Stopped and Started are seconds from the start of the run
	// to the stop being asked (pg_ctl stop -m fast: from then on new
	// connections are refused), the server being down (pg_ctl stop
	// returned) and up again (pg_ctl start returned); in the lab, to the
	// proxy's cut being asked, in effect, and lifted.
	Stopping float64 `json:"stopping_seconds"`
	Stopped  float64 `json:"stopped_seconds"`
	Started  float64 `json:"started_seconds"`
	// The run's summary: answers by label (201, 503
	// database-unavailable, ...), failures, and the table's findings, each
	// of which must be 0.
	dbfault.Summary
	// Recovery in seconds (Summary.Recovery): from the server's start to
	// the sending of the last order that failed.
	RecoverySeconds float64 `json:"recovery_seconds"`
	// The answers for each second of the run.
	BySecond []ledger.Tally `json:"answers_by_second"`
	Err      string         `json:"error,omitempty"`
}

// outageOf is what a db_stop acts on: the fault, its target, and the
// database whose orders table the keyed orders are held to.
type outageOf struct {
	fault dbfault.Fault
	tg    dbfault.Target
	dbURL string
	said  string // logged once the fault holds: what was done
	log   io.Writer
}

// localOutage stops the local run's own cluster (be.cluster).
func localOutage(be *backend, hold time.Duration) outageOf {
	return outageOf{fault: dbfault.Outage(hold), tg: dbfault.Target{Cluster: be.cluster, DBURL: be.db.URL}, dbURL: be.db.URL,
		said: "Postgres stopped", log: be.log}
}

// labOutage cuts the lab's Postgres off through the lab's database proxy
// (down, then none): a proxy outage, not a restart of Postgres.
func labOutage(px *LabProxy, hold time.Duration, log io.Writer) outageOf {
	cut := func(ctx context.Context, down bool) error {
		f := dbproxy.Fault{Fault: "none"}
		if down {
			f.Fault = "down"
		}
		return px.Control.Set(ctx, f)
	}
	return outageOf{fault: dbfault.ProxyOutage(hold, cut), dbURL: px.Database,
		said: "the lab's database proxy cut every connection to Postgres (Postgres keeps running)", log: log}
}

// outage runs a db_stop beside a target's run: it sends keyed orders to
// apiURL from now until finish is called, applies the fault After into the
// run for For (dbfault.Apply), and lifts it.
type outage struct {
	of     outageOf
	target string
	began  time.Time
	load   *ledger.Load
	done   chan struct{}
	tl     dbfault.Timeline
	err    error
}

func startOutage(ctx context.Context, of outageOf, stop DBStop, target, phase, apiURL string) *outage {
	o := &outage{of: of, target: target, began: time.Now(), done: make(chan struct{})}
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

// finish waits for the fault to be lifted, stops the keyed orders and
// holds their answers to the table.
func (o *outage) finish(ctx context.Context) OutageResult {
	<-o.done
	as := o.load.Finish()
	res := OutageResult{Target: o.target, How: o.of.fault.What, Summary: dbfault.Summary{Sent: len(as), Answers: ledger.Count(as)}}
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

// outageTables are the tables of a phase's outages: one row per target,
// then the answers second by second.
func outageTables(os []OutageResult) []Table {
	if len(os) == 0 {
		return nil
	}
	sum := Table{Head: []string{"service", "outage", "asked, in effect, lifted", "keyed orders", "answers", "full success again after the outage", "acknowledged but missing", "stored twice", "answered not stored but stored"}}
	bySec := Table{Head: []string{"second"}}
	rows := 0
	for _, o := range os {
		down := "-"
		if o.Started > 0 {
			down = fmt.Sprintf("%.2f s, %.2f s, %.2f s", o.Stopping, o.Stopped, o.Started)
		}
		rec := o.RecoveryText()
		if o.Err != "" {
			rec = "error: " + o.Err
		}
		sum.Rows = append(sum.Rows, []string{o.Target, cmp.Or(o.How, "Postgres stopped"), down, fmt.Sprint(o.Sent), o.Answers.String(), rec,
			fmt.Sprint(o.Missing), fmt.Sprint(o.Duplicates), fmt.Sprint(o.Stored)})
		bySec.Head = append(bySec.Head, o.Target)
		rows = max(rows, len(o.BySecond))
	}
	for sec := range rows {
		row := []string{fmt.Sprint(sec)}
		for _, o := range os {
			cell := "-"
			if sec < len(o.BySecond) {
				cell = o.BySecond[sec].String()
			}
			row = append(row, cell)
		}
		bySec.Rows = append(bySec.Rows, row)
	}
	return []Table{sum, bySec}
}
