package scenario

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/orderlab/orderlab/internal/dbfault"
	"github.com/orderlab/orderlab/internal/ledger"
	"github.com/orderlab/orderlab/loadtest/measure"
)

// OutageResult is one target's run through a db_stop: the keyed orders
// sent beside the phase's load (internal/ledger), their answers second by
// second, how long the service took to answer with success again, and what
// the orders table says about every answer (dbfault.Summary).
type OutageResult struct {
	Target string `json:"target"`
	// Stopping, Stopped and Started are seconds from the start of the run
	// to the stop being asked (pg_ctl stop -m fast: from then on new
	// connections are refused), the server being down (pg_ctl stop
	// returned) and up again (pg_ctl start returned).
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

// outage runs a db_stop beside a target's run: it sends keyed orders to
// apiURL from now until finish is called, stops the cluster After into the
// run for For (dbfault.Outage), and starts it again.
type outage struct {
	be     *backend
	target string
	began  time.Time
	load   *ledger.Load
	done   chan struct{}
	tl     dbfault.Timeline
	err    error
}

func startOutage(ctx context.Context, be *backend, stop DBStop, target, phase, apiURL string) *outage {
	o := &outage{be: be, target: target, began: time.Now(), done: make(chan struct{})}
	o.load = ledger.Start(apiURL+"/orders", fmt.Sprintf("%s-%s-%d", phase, target, o.began.UnixNano()), stop.Ledger, 0)
	go func() {
		defer close(o.done)
		if !measure.Sleep(ctx, stop.After.D()) {
			return
		}
		tg := dbfault.Target{Cluster: be.cluster, DBURL: be.db.URL}
		o.tl, o.err = dbfault.Apply(context.WithoutCancel(ctx), dbfault.Outage(stop.For.D()), tg, func() {
			fmt.Fprintf(be.log, "   Postgres stopped %s into the run, for %s\n", time.Since(o.began).Round(10*time.Millisecond), stop.For.D())
		})
	}()
	return o
}

// finish waits for Postgres to be up again, stops the keyed orders and
// holds their answers to the table.
func (o *outage) finish(ctx context.Context) OutageResult {
	<-o.done
	as := o.load.Finish()
	res := OutageResult{Target: o.target, Summary: dbfault.Summary{Sent: len(as), Answers: ledger.Count(as)}}
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
	conn, err := pgx.Connect(ctx, o.be.db.URL)
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
	sum := Table{Head: []string{"service", "stop asked, down, up again", "keyed orders", "answers", "full success again after restart", "acknowledged but missing", "stored twice", "answered not stored but stored"}}
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
		sum.Rows = append(sum.Rows, []string{o.Target, down, fmt.Sprint(o.Sent), o.Answers.String(), rec,
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
