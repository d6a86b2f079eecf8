package result

import (
	"cmp"
	"encoding/json"
	"io"
	"slices"
	"time"

	"github.com/orderlab/orderlab/internal/dbfault"
	"github.com/orderlab/orderlab/internal/ledger"
	"github.com/orderlab/orderlab/lab/scenario"
	"github.com/orderlab/orderlab/lab/scenario/observe"
	"github.com/orderlab/orderlab/lab/tasks"
	"github.com/orderlab/orderlab/loadtest/report"
)

// Schema names the layout of a scenario result.
const Schema = "orderlab.scenario/v1"

// Result is one run of a scenario: what was asked and what was measured.
type Result struct {
	Schema   string            `json:"schema"`
	Scenario scenario.Scenario `json:"scenario"` // as run (shortened when quick)
	Quick    bool              `json:"quick"`
	// Count is how many times every phase ran: each phase's report holds
	// Count runs per target, in the order they ran.
	Count int  `json:"count,omitempty"`
	Local bool `json:"local"` // the runner started the services
	// Board is the Grafana board's URL for the run's time range (a run
	// against the lab).
	Board     string        `json:"board,omitempty"`
	StartedAt time.Time     `json:"started_at"`
	Elapsed   float64       `json:"elapsed_seconds"`
	Host      report.Host   `json:"host"`
	Phases    []PhaseResult `json:"phases"`
}

// PhaseResult is one phase: for HTTP phases the loadtest report (one run per
// target, each with the server's metrics sampled over time), for tasks
// phases the in-process figures.
type PhaseResult struct {
	Name     string            `json:"name"`
	Env      map[string]string `json:"env,omitempty"` // what the services ran with
	BoundRPS float64           `json:"bound_rps,omitempty"`
	Loadtest *report.Report    `json:"loadtest,omitempty"`
	// Tasks is the run with the median time of the in-process runs
	// Repeats holds (one per repetition).
	Tasks   *TasksResult   `json:"tasks,omitempty"`
	Repeats []*TasksResult `json:"repeats,omitempty"`
	// Outages are the db_stop runs, one per target and repetition.
	Outages []OutageResult `json:"outages,omitempty"`
	// Postgres is what the server showed of each target's run (a local
	// run), in the order they ran.
	Postgres []observe.PostgresView `json:"postgres,omitempty"`
	// PgBouncer is what PgBouncer showed of each target's run through it.
	PgBouncer []observe.PoolerView `json:"pgbouncer,omitempty"`
	// Snapshots are the flight recorder windows kept of the targets whose
	// run missed or set off a pitfall alert, or why one could not be kept.
	Snapshots []Snapshot `json:"snapshots,omitempty"`
}

// AddTasks records one repetition of a tasks phase and makes the one with
// the median time its Tasks.
func (p *PhaseResult) AddTasks(t *TasksResult) {
	p.Repeats = append(p.Repeats, t)
	sorted := slices.Clone(p.Repeats)
	slices.SortStableFunc(sorted, func(a, b *TasksResult) int { return cmp.Compare(a.ElapsedSeconds, b.ElapsedSeconds) })
	p.Tasks = sorted[(len(sorted)-1)/2]
}

// TasksResult is an in-process run of background jobs.
type TasksResult struct {
	tasks.Stats
	ElapsedSeconds float64 `json:"elapsed_seconds"`
	// ScaledSeconds is the time scaled to Tasks.ScaleTo jobs (0: not scaled).
	ScaledSeconds float64 `json:"scaled_seconds,omitempty"`
	// BoundSeconds is ceil(jobs/workers) x sleep for a pool; sleep for goroutines.
	BoundSeconds float64 `json:"bound_seconds,omitempty"`
}

// WriteJSON encodes r as indented JSON.
func WriteJSON(w io.Writer, r *Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

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

// ByTarget groups runs by target, in the order the targets first ran.
func ByTarget(runs []report.Run) [][]report.Run {
	var groups [][]report.Run
	at := map[string]int{}
	for _, r := range runs {
		i, ok := at[r.Name]
		if !ok {
			i = len(groups)
			at[r.Name] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], r)
	}
	return groups
}

// Median returns the median of vs (the mean of the middle two for an even
// count) and their range.
func Median(vs []float64) (median, lo, hi float64) {
	s := slices.Sorted(slices.Values(vs))
	n := len(s)
	if n == 0 {
		return 0, 0, 0
	}
	median = s[n/2]
	if n%2 == 0 {
		median = (s[n/2-1] + s[n/2]) / 2
	}
	return median, s[0], s[n-1]
}

// Representative returns, for each target, the run with the median
// goodput: the one a chart shows when a phase ran several times.
func Representative(runs []report.Run) []report.Run {
	var out []report.Run
	for _, group := range ByTarget(runs) {
		s := slices.Clone(group)
		slices.SortStableFunc(s, func(a, b report.Run) int { return cmp.Compare(a.Goodput, b.Goodput) })
		out = append(out, s[(len(s)-1)/2])
	}
	return out
}
