package observe

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/orderlab/orderlab/loadtest/report"
)

// PostgresView is what Postgres itself showed of one target's run: the
// scenario database's client backends in pg_stat_activity, sampled by the
// runner over a superuser connection of its own (never the services'
// role), as a database owner would see them (the board's row "Postgres
// server" draws the same from postgres_exporter).
type PostgresView struct {
	Target string `json:"target"`
	// Samples of pg_stat_activity were taken every IntervalSeconds, the
	// first before the load and the last after it.
	Samples         int     `json:"samples"`
	IntervalSeconds float64 `json:"interval_seconds"`
	// MaxConnections and Reserved (superuser_reserved_connections) are the
	// server's; Role is the services' login role and RoleLimit its
	// CONNECTION LIMIT (-1: none).
	MaxConnections int    `json:"max_connections"`
	Reserved       int    `json:"superuser_reserved_connections"`
	Role           string `json:"role"`
	RoleLimit      int    `json:"role_connection_limit"`
	// PeakBackends is the most client backends on the database in one
	// sample; PeakByApp the same per application_name (orderlab-<model>;
	// "" for a session that set none, PgBouncer's before its first query).
	PeakBackends int            `json:"peak_backends"`
	PeakByApp    map[string]int `json:"peak_by_application,omitempty"`
	// Peak and mean backends by state over the samples: active (running a
	// statement), idle, idle in transaction (aborted ones included).
	PeakActive   int     `json:"peak_active"`
	PeakIdle     int     `json:"peak_idle"`
	PeakIdleInTx int     `json:"peak_idle_in_transaction"`
	MeanActive   float64 `json:"mean_active"`
	MeanIdle     float64 `json:"mean_idle"`
	MeanIdleInTx float64 `json:"mean_idle_in_transaction"`
	// PeakLockWaits is the most backends waiting on a lock (wait_event_type
	// Lock) in one sample.
	PeakLockWaits int `json:"peak_lock_waits"`
	// The longest open transaction (now - xact_start), the longest a
	// session sat idle in transaction and the longest a session sat idle
	// (now - state_change), in seconds, over the samples.
	LongestTxSeconds       float64 `json:"longest_transaction_seconds"`
	LongestIdleInTxSeconds float64 `json:"longest_idle_in_transaction_seconds"`
	LongestIdleSeconds     float64 `json:"longest_idle_seconds"`
	// Refused counts the server log's lines of connections refused for too
	// many clients (FATAL 53300: "too many connections for role", "sorry,
	// too many clients already") written during the run; nil when the
	// runner cannot read the log (the shared server).
	Refused *int `json:"refused,omitempty"`
	// Missed counts the samples that failed (the server stopped, say), Err
	// says the last failure; the load ran regardless.
	Missed int    `json:"missed,omitempty"`
	Err    string `json:"error,omitempty"`
}

// Every is how often the runner samples pg_stat_activity.
const Every = 250 * time.Millisecond

// PostgresWatch samples pg_stat_activity for one target's run (WatchPostgres)
// until Stop.
type PostgresWatch struct {
	s       sampler // reconnects after a failed sample
	db      string
	logPath string
	logFrom int64
	Pooler  *PoolerWatch // PgBouncer's view beside it, when the run goes through it

	mu                        sync.Mutex
	view                      PostgresView
	sumActive, sumIdle, sumTx float64
}

// WatchPostgres starts sampling the client backends of database on the
// server adminURL reaches (a superuser's URL), every interval, with a
// first sample before it returns. role is the services' login role;
// logPath, when set, is the server's log, read for refused connections
// from its present end. A failure to connect is recorded in the view, not
// returned: the load runs regardless.
func WatchPostgres(ctx context.Context, adminURL, database, role, logPath, target string, interval time.Duration) *PostgresWatch {
	w := &PostgresWatch{db: database, logPath: logPath,
		view: PostgresView{Target: target, Role: role, RoleLimit: -1, IntervalSeconds: interval.Seconds()}}
	if logPath != "" {
		if fi, err := os.Stat(logPath); err == nil {
			w.logFrom = fi.Size()
		}
	}
	// The server went away (a db_stop): count the miss and connect again
	// at the next tick.
	w.s = sampler{sample: w.sample, miss: w.miss, reconnect: true}
	var err error
	if w.s.cfg, err = pgx.ParseConfig(adminURL); err == nil {
		w.s.cfg.RuntimeParams["application_name"] = "orderlab-scenario-runner"
		err = w.s.connect(ctx)
	}
	if err == nil {
		err = w.s.conn.QueryRow(ctx, `SELECT current_setting('max_connections')::int,
			current_setting('superuser_reserved_connections')::int,
			coalesce((SELECT rolconnlimit FROM pg_roles WHERE rolname = $1), -1)`, role).
			Scan(&w.view.MaxConnections, &w.view.Reserved, &w.view.RoleLimit)
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
func (w *PostgresWatch) miss(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.view.Missed++
	w.view.Err = err.Error()
}

// sample reads pg_stat_activity once and folds it into the view.
func (w *PostgresWatch) sample(ctx context.Context, conn *pgx.Conn) error {
	rows, err := conn.Query(ctx, `SELECT coalesce(application_name, ''), coalesce(state, ''),
			wait_event_type IS NOT DISTINCT FROM 'Lock',
			coalesce(extract(epoch FROM clock_timestamp() - xact_start), 0)::float8,
			coalesce(extract(epoch FROM clock_timestamp() - state_change), 0)::float8
		FROM pg_stat_activity
		WHERE datname = $1 AND backend_type = 'client backend' AND pid <> pg_backend_pid()`, w.db)
	if err != nil {
		return err
	}
	defer rows.Close()
	byApp := map[string]int{}
	var n, active, idle, inTx, locks int
	var longestTx, longestInTx, longestIdle float64
	for rows.Next() {
		var app, state string
		var lock bool
		var tx, since float64
		if err := rows.Scan(&app, &state, &lock, &tx, &since); err != nil {
			return err
		}
		n++
		byApp[app]++
		longestTx = max(longestTx, tx)
		if lock {
			locks++
		}
		switch {
		case state == "active":
			active++
		case state == "idle":
			idle++
			longestIdle = max(longestIdle, since)
		case strings.HasPrefix(state, "idle in transaction"):
			inTx++
			longestInTx = max(longestInTx, since)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	v := &w.view
	v.Samples++
	v.PeakBackends = max(v.PeakBackends, n)
	for app, k := range byApp {
		if v.PeakByApp == nil {
			v.PeakByApp = map[string]int{}
		}
		v.PeakByApp[app] = max(v.PeakByApp[app], k)
	}
	v.PeakActive, v.PeakIdle, v.PeakIdleInTx = max(v.PeakActive, active), max(v.PeakIdle, idle), max(v.PeakIdleInTx, inTx)
	w.sumActive, w.sumIdle, w.sumTx = w.sumActive+float64(active), w.sumIdle+float64(idle), w.sumTx+float64(inTx)
	v.PeakLockWaits = max(v.PeakLockWaits, locks)
	v.LongestTxSeconds = max(v.LongestTxSeconds, longestTx)
	v.LongestIdleInTxSeconds = max(v.LongestIdleInTxSeconds, longestInTx)
	v.LongestIdleSeconds = max(v.LongestIdleSeconds, longestIdle)
	return nil
}

// Samples is how many samples w has taken so far.
func (w *PostgresWatch) Samples() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.view.Samples
}

// Stop takes a last sample, ends the sampling and returns the view.
func (w *PostgresWatch) Stop(ctx context.Context) PostgresView {
	w.s.stop(ctx)
	w.s.close(ctx)
	v := w.view
	if v.Samples > 0 {
		n := float64(v.Samples)
		v.MeanActive, v.MeanIdle, v.MeanIdleInTx = w.sumActive/n, w.sumIdle/n, w.sumTx/n
	}
	if w.logPath != "" {
		if n, err := countRefused(w.logPath, w.logFrom); err == nil {
			v.Refused = &n
		} else if v.Err == "" {
			v.Err = err.Error()
		}
	}
	return v
}

// countRefused counts the lines of the server log at path, from byte
// offset from on, that refuse a connection for too many clients (SQLSTATE
// 53300, whose two messages both say "too many").
func countRefused(path string, from int64) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return 0, err
	}
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, "FATAL:") &&
			(strings.Contains(line, "too many connections for role") || strings.Contains(line, "too many clients already")) {
			n++
		}
	}
	return n, sc.Err()
}

// String is the view in one line, as the runner's log says it.
func (v PostgresView) String() string {
	if v.Samples == 0 {
		return "no sample: " + v.Err
	}
	s := fmt.Sprintf("at most %d backends (%s), mean %.1f active, %.1f idle, %.1f idle in transaction "+
		"(peaks %d, %d, %d); longest transaction %s, idle in transaction %s, idle %s; at most %d waiting on a lock",
		v.PeakBackends, v.limits(), v.MeanActive, v.MeanIdle, v.MeanIdleInTx, v.PeakActive, v.PeakIdle, v.PeakIdleInTx,
		report.FormatSeconds(v.LongestTxSeconds), report.FormatSeconds(v.LongestIdleInTxSeconds),
		report.FormatSeconds(v.LongestIdleSeconds), v.PeakLockWaits)
	if v.Refused != nil {
		s += fmt.Sprintf("; %d connections refused", *v.Refused)
	}
	return s
}

// limits says the role's connection limit, when it has one, and the
// server's max_connections.
func (v PostgresView) limits() string {
	s := fmt.Sprintf("max_connections %d", v.MaxConnections)
	if v.RoleLimit >= 0 {
		s = fmt.Sprintf("role %s limit %d, %s", v.Role, v.RoleLimit, s)
	}
	return s
}
