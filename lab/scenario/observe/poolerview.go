package observe

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/orderlab/orderlab/loadtest/report"
)

// PoolerView is what PgBouncer showed of one target's run through it: its
// pools of the scenario's database in SHOW POOLS on its admin console,
// sampled by the runner beside pg_stat_activity (PostgresView), and the
// database's line of SHOW STATS before and after. The services' pools are
// PgBouncer's clients: where they queue for its server connections, the
// wait has moved from their pools into PgBouncer.
type PoolerView struct {
	Target          string  `json:"target"`
	Samples         int     `json:"samples"`
	IntervalSeconds float64 `json:"interval_seconds"`
	// Mode and PoolSize are its pool_mode and default_pool_size: the server
	// connections it may open per database and user.
	Mode     string `json:"pool_mode"`
	PoolSize int    `json:"default_pool_size"`
	// Client connections, summed over the database's pools in one sample:
	// the peak of those linked to a server connection or idle (cl_active),
	// the peak and mean of those waiting for one (cl_waiting).
	PeakClientsActive  int     `json:"peak_cl_active"`
	PeakClientsWaiting int     `json:"peak_cl_waiting"`
	MeanClientsWaiting float64 `json:"mean_cl_waiting"`
	// Server connections: the peak of those linked to a client (sv_active)
	// and of those idle, ready for one (sv_idle).
	PeakServersActive int `json:"peak_sv_active"`
	PeakServersIdle   int `json:"peak_sv_idle"`
	// LongestWaitSeconds is the longest the oldest waiting client had
	// waited in one sample (maxwait and maxwait_us).
	LongestWaitSeconds float64 `json:"longest_wait_seconds"`
	// Transactions and WaitSeconds are the run's increases of SHOW STATS'
	// total_xact_count (transactions begun) and total_wait_time (the time
	// clients spent waiting for a server connection), so WaitSeconds /
	// Transactions is the mean wait inside PgBouncer per transaction.
	Transactions int64   `json:"transactions"`
	WaitSeconds  float64 `json:"wait_seconds"`
	// Missed counts the samples that failed, Err says the last failure.
	Missed int    `json:"missed,omitempty"`
	Err    string `json:"error,omitempty"`
}

// PoolerWatch samples PgBouncer's SHOW POOLS for one target's run
// (WatchPooler) until stop.
type PoolerWatch struct {
	s    sampler
	db   string
	from poolerStats

	mu          sync.Mutex
	view        PoolerView
	sumWaiting  float64
	statsBefore bool
}

// poolerStats is the database's line of SHOW STATS.
type poolerStats struct {
	xacts int64
	waitU int64 // microseconds
}

// WatchPooler starts sampling the pools of database on the PgBouncer whose
// admin console adminURL reaches, every interval, with a first sample
// before it returns. A failure is recorded in the view, not returned.
func WatchPooler(ctx context.Context, adminURL, database, target string, interval time.Duration) *PoolerWatch {
	w := &PoolerWatch{db: database, view: PoolerView{Target: target, IntervalSeconds: interval.Seconds()}}
	w.s = sampler{sample: w.sample, miss: w.miss}
	var err error
	if w.s.cfg, err = pgx.ParseConfig(adminURL); err == nil {
		err = w.s.connect(ctx)
	}
	if err == nil {
		err = w.config(ctx)
	}
	if err == nil {
		w.from, err = w.stats(ctx)
		w.statsBefore = err == nil
	}
	if err == nil {
		err = w.s.start(ctx, interval)
	}
	if err != nil {
		w.view.Err = err.Error()
	}
	return w
}

// miss records a failed sample.
func (w *PoolerWatch) miss(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.view.Missed++
	w.view.Err = err.Error()
}

// show runs an admin console command on conn (nil: not connected) and
// returns its rows by column name, as text (the console speaks the simple
// protocol only, in text).
func show(ctx context.Context, conn *pgx.Conn, command string) ([]map[string]string, error) {
	if conn == nil {
		return nil, errors.New("not connected")
	}
	rows, err := conn.Query(ctx, command)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []map[string]string
	for rows.Next() {
		row := map[string]string{}
		for i, f := range rows.FieldDescriptions() {
			row[f.Name] = string(rows.RawValues()[i])
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

// config reads pool_mode and default_pool_size from SHOW CONFIG.
func (w *PoolerWatch) config(ctx context.Context) error {
	rows, err := show(ctx, w.s.conn, "SHOW CONFIG")
	if err != nil {
		return err
	}
	for _, r := range rows {
		switch r["key"] {
		case "pool_mode":
			w.view.Mode = r["value"]
		case "default_pool_size":
			w.view.PoolSize, _ = strconv.Atoi(r["value"])
		}
	}
	return nil
}

// stats reads the database's totals from SHOW STATS (zero before its
// first client).
func (w *PoolerWatch) stats(ctx context.Context) (poolerStats, error) {
	rows, err := show(ctx, w.s.conn, "SHOW STATS")
	if err != nil {
		return poolerStats{}, err
	}
	for _, r := range rows {
		if r["database"] == w.db {
			xacts, err1 := strconv.ParseInt(r["total_xact_count"], 10, 64)
			waitU, err2 := strconv.ParseInt(r["total_wait_time"], 10, 64)
			return poolerStats{xacts, waitU}, errors.Join(err1, err2)
		}
	}
	return poolerStats{}, nil
}

// sample reads SHOW POOLS once and folds the database's pools into the view.
func (w *PoolerWatch) sample(ctx context.Context, conn *pgx.Conn) error {
	rows, err := show(ctx, conn, "SHOW POOLS")
	if err != nil {
		return err
	}
	var active, waiting, svActive, svIdle int
	var wait float64
	for _, r := range rows {
		if r["database"] != w.db {
			continue
		}
		n := map[string]int{}
		for _, col := range []string{"cl_active", "cl_waiting", "sv_active", "sv_idle", "maxwait", "maxwait_us"} {
			if n[col], err = strconv.Atoi(r[col]); err != nil {
				return fmt.Errorf("SHOW POOLS, %s: %w", col, err)
			}
		}
		active, waiting = active+n["cl_active"], waiting+n["cl_waiting"]
		svActive, svIdle = svActive+n["sv_active"], svIdle+n["sv_idle"]
		wait = max(wait, float64(n["maxwait"])+float64(n["maxwait_us"])/1e6)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	v := &w.view
	v.Samples++
	v.PeakClientsActive, v.PeakClientsWaiting = max(v.PeakClientsActive, active), max(v.PeakClientsWaiting, waiting)
	v.PeakServersActive, v.PeakServersIdle = max(v.PeakServersActive, svActive), max(v.PeakServersIdle, svIdle)
	v.LongestWaitSeconds = max(v.LongestWaitSeconds, wait)
	w.sumWaiting += float64(waiting)
	return nil
}

// peek is the view so far.
func (w *PoolerWatch) Peek() PoolerView {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.view
}

// Stop takes a last sample and the totals, ends the sampling and returns
// the view.
func (w *PoolerWatch) Stop(ctx context.Context) PoolerView {
	if !w.s.stop(ctx) {
		return w.view
	}
	defer w.s.close(ctx)
	if to, err := w.stats(ctx); err == nil && w.statsBefore {
		w.view.Transactions = to.xacts - w.from.xacts
		w.view.WaitSeconds = float64(to.waitU-w.from.waitU) / 1e6
	} else if err != nil {
		w.view.Err = err.Error()
	}
	v := w.view
	if v.Samples > 0 {
		v.MeanClientsWaiting = w.sumWaiting / float64(v.Samples)
	}
	return v
}

// MeanWaitSeconds is the mean wait inside PgBouncer per transaction of the
// run (0 without one).
func (v PoolerView) MeanWaitSeconds() float64 {
	if v.Transactions <= 0 {
		return 0
	}
	return v.WaitSeconds / float64(v.Transactions)
}

// String is the view in one line, as the runner's log says it.
func (v PoolerView) String() string {
	if v.Samples == 0 {
		return "no sample: " + v.Err
	}
	return fmt.Sprintf("at most %d clients waiting for a server connection (mean %.1f), the longest %s; "+
		"at most %d clients active, %d server connections active and %d idle (default_pool_size %d, %s mode); "+
		"%d transactions waited %s in all, %s each on average",
		v.PeakClientsWaiting, v.MeanClientsWaiting, report.FormatSeconds(v.LongestWaitSeconds),
		v.PeakClientsActive, v.PeakServersActive, v.PeakServersIdle, v.PoolSize, v.Mode,
		v.Transactions, report.FormatSeconds(v.WaitSeconds), report.FormatSeconds(v.MeanWaitSeconds()))
}
