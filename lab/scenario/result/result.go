package scenario

import (
	"cmp"
	"encoding/json"
	"io"
	"slices"
	"time"

	"github.com/orderlab/orderlab/lab/tasks"
	"github.com/orderlab/orderlab/loadtest/report"
)

// Schema names the layout of a scenario result.
const Schema = "orderlab.scenario/v1"

// Result is one run of a scenario: what was asked and what was measured.
type Result struct {
	Schema   string   `json:"schema"`
	Scenario Scenario `json:"scenario"` // as run (shortened when quick)
	Quick    bool     `json:"quick"`
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
	Postgres []PostgresView `json:"postgres,omitempty"`
	// PgBouncer is what PgBouncer showed of each target's run through it.
	PgBouncer []PoolerView `json:"pgbouncer,omitempty"`
}

// addTasks records one repetition of a tasks phase and makes the one with
// the median time its Tasks.
func (p *PhaseResult) addTasks(t *TasksResult) {
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
