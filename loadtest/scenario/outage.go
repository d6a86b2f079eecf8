package scenario

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/orderlab/orderlab/internal/ledger"
	"github.com/orderlab/orderlab/loadtest/measure"
)

// OutageResult is one target's run through a db_stop: the keyed orders
// sent beside the phase's load (internal/ledger), their answers second by
// second, how long the service took to answer with success again, and what
// the orders table says about every answer.
type OutageResult struct {
	Target string `json:"target"`
	// Stopping, Stopped and Started are seconds from the start of the run
	// to the stop being asked (pg_ctl stop -m fast: from then on new
	// connections are refused), the server being down (pg_ctl stop
	// returned) and up again (pg_ctl start returned).
	Stopping float64 `json:"stopping_seconds"`
	Stopped  float64 `json:"stopped_seconds"`
	Started  float64 `json:"started_seconds"`
	Sent     int     `json:"sent"`
	// Answers by label (201, 503 database-unavailable, ...), in total and
	// for each second of the run.
	Answers  map[string]int   `json:"answers"`
	BySecond []map[string]int `json:"answers_by_second"`
	Failed   int              `json:"failed"`
	// Recovery is the time from the server's start to the sending of the
	// last order that failed: 0 when every order sent after it succeeded.
	Recovery float64 `json:"recovery_seconds"`
	// Missing (acknowledged, not stored), Duplicates (stored twice) and
	// Stored (answered not stored, but stored): each must be 0.
	Missing    int    `json:"missing"`
	Duplicates int    `json:"duplicates"`
	Stored     int    `json:"stored_despite_answer"`
	Err        string `json:"error,omitempty"`
}

// outage runs a db_stop beside a target's run: it sends keyed orders to
// apiURL from now until finish is called, stops the cluster After into the
// run for For, and starts it again.
type outage struct {
	be       *backend
	stop     DBStop
	target   string
	began    time.Time
	load     *ledger.Load
	done     chan struct{}
	stopping time.Time
	stopped  time.Time
	started  time.Time
	err      error
}

func startOutage(ctx context.Context, be *backend, stop DBStop, target, phase, apiURL string) *outage {
	o := &outage{be: be, stop: stop, target: target, began: time.Now(), done: make(chan struct{})}
	o.load = ledger.Start(apiURL+"/orders", fmt.Sprintf("%s-%s-%d", phase, target, o.began.UnixNano()), stop.Ledger, 0)
	go func() {
		defer close(o.done)
		if !measure.Sleep(ctx, stop.After.D()) {
			return
		}
		o.stopping = time.Now()
		if o.err = be.cluster.Stop(context.WithoutCancel(ctx)); o.err != nil {
			return
		}
		o.stopped = time.Now()
		fmt.Fprintf(be.log, "   Postgres stopped %s into the run, for %s\n", o.stopped.Sub(o.began).Round(10*time.Millisecond), stop.For.D())
		measure.Sleep(ctx, stop.For.D())
		o.err = be.cluster.Start(context.WithoutCancel(ctx))
		o.started = time.Now()
	}()
	return o
}

// finish waits for Postgres to be up again, stops the keyed orders and
// holds their answers to the table.
func (o *outage) finish(ctx context.Context) OutageResult {
	<-o.done
	as := o.load.Finish()
	res := OutageResult{Target: o.target, Sent: len(as), Answers: ledger.Tally(as)}
	if o.err != nil {
		res.Err = o.err.Error()
		return res
	}
	if !o.stopped.IsZero() {
		res.Stopping = o.stopping.Sub(o.began).Seconds()
		res.Stopped = o.stopped.Sub(o.began).Seconds()
		res.Started = o.started.Sub(o.began).Seconds()
	}
	for _, a := range as {
		sec := int(a.Sent.Sub(o.began) / time.Second)
		for len(res.BySecond) <= sec {
			res.BySecond = append(res.BySecond, map[string]int{})
		}
		res.BySecond[sec][a.Label()]++
		if a.Success() {
			continue
		}
		res.Failed++
		if d := a.Sent.Sub(o.started).Seconds(); !o.started.IsZero() && d > res.Recovery {
			res.Recovery = d
		}
	}
	conn, err := pgx.Connect(ctx, o.be.db.URL)
	if err != nil {
		res.Err = err.Error()
		return res
	}
	defer conn.Close(context.WithoutCancel(ctx))
	au, err := ledger.Check(ctx, conn, as)
	if err != nil {
		res.Err = err.Error()
		return res
	}
	res.Missing, res.Duplicates, res.Stored = len(au.Missing), len(au.Duplicates), len(au.Stored)
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
		rec := "no failed answer"
		switch {
		case o.Err != "":
			rec = "error: " + o.Err
		case o.Failed > 0 && o.Recovery == 0:
			rec = "at once"
		case o.Failed > 0:
			rec = fmt.Sprintf("%.2f s", o.Recovery)
		}
		sum.Rows = append(sum.Rows, []string{o.Target, down, fmt.Sprint(o.Sent), tally(o.Answers), rec,
			fmt.Sprint(o.Missing), fmt.Sprint(o.Duplicates), fmt.Sprint(o.Stored)})
		bySec.Head = append(bySec.Head, o.Target)
		rows = max(rows, len(o.BySecond))
	}
	for sec := range rows {
		row := []string{fmt.Sprint(sec)}
		for _, o := range os {
			cell := "-"
			if sec < len(o.BySecond) {
				cell = tally(o.BySecond[sec])
			}
			row = append(row, cell)
		}
		bySec.Rows = append(bySec.Rows, row)
	}
	return []Table{sum, bySec}
}

// tally writes answers by label, "201: 48; 503 database-unavailable: 2".
func tally(m map[string]int) string {
	var parts []string
	for _, l := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s: %d", l, m[l]))
	}
	return strings.Join(parts, "; ")
}
