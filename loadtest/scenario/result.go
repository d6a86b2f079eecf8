package scenario

import (
	"encoding/json"
	"io"
	"time"

	"github.com/orderlab/orderlab/loadtest/report"
	"github.com/orderlab/orderlab/loadtest/tasks"
)

// Schema names the layout of a scenario result.
const Schema = "orderlab.scenario/v1"

// Result is one run of a scenario: what was asked and what was measured.
type Result struct {
	Schema    string        `json:"schema"`
	Scenario  Scenario      `json:"scenario"` // as run (shortened when quick)
	Quick     bool          `json:"quick"`
	Local     bool          `json:"local"` // the runner started the services
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
	Tasks    *TasksResult      `json:"tasks,omitempty"`
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
