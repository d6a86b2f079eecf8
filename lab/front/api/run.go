package api

import (
	"fmt"
	"strings"
	"time"

	"github.com/orderlab/orderlab/lab/scenario/result"
	"github.com/orderlab/orderlab/loadtest/htmlreport"
)

// Run states.
const (
	StateRunning  = "running"  // phases under way
	StateStopping = "stopping" // Stop was asked: the runner is putting the knobs back
	StateStopped  = "stopped"  // stopped before its end; knobs put back
	StateDone     = "done"     // every phase ran
	StateFailed   = "failed"   // a phase could not run; knobs put back
)

// Run is one run as the API shows it.
type Run struct {
	ID       int    `json:"id"`
	Scenario string `json:"scenario"`
	Number   int    `json:"number"`
	Title    string `json:"title"`
	Quick    bool   `json:"quick"`
	// Mystery: a pitfall run without its name (GET /api/mysteries/{id});
	// until it is answered its log, error, verdicts and report are held back.
	Mystery bool   `json:"mystery,omitempty"`
	By      string `json:"by"` // the name given, or "someone at" the remote host
	State   string `json:"state"`
	// StartedAt and EndsAt (planned: the load of every phase, knob changes
	// not counted), EndedAt once it ended.
	StartedAt time.Time  `json:"started_at"`
	EndsAt    time.Time  `json:"ends_at"`
	EndedAt   *time.Time `json:"ended_at,omitempty"`
	Phases    []string   `json:"phases"`
	Phase     *Phase     `json:"phase,omitempty"` // the phase under way
	// PhaseStarts is when each phase began, its knobs applied, in order:
	// the live charts mark each.
	PhaseStarts []PhaseStart `json:"phase_starts"`
	Error       string       `json:"error,omitempty"`
	// Board opens the board on the run's range: up to now, refreshing,
	// while it runs; its exact range once it ended.
	Board    string           `json:"board,omitempty"`
	Verdicts []result.Verdict `json:"verdicts,omitempty"`
	// Picture is the verdict's figures as one chart draws them, Drawing
	// that chart (the ECharts option the report draws too), and
	// Conclusion the verdicts in a sentence, once the run ended.
	Picture    *result.Picture     `json:"picture,omitempty"`
	Drawing    *htmlreport.Drawing `json:"picture_drawing,omitempty"`
	Conclusion string              `json:"conclusion,omitempty"`
	// Explanation is what the scenario expects of each target, and Fix the
	// remedy, from the catalog.
	Explanation []string `json:"explanation,omitempty"`
	Fix         string   `json:"fix,omitempty"`
	Report      *Links   `json:"report,omitempty"` // once written
	Log         []string `json:"log"`              // the runner's last lines
}

// Phase is the phase under way.
type Phase struct {
	Name      string    `json:"name"`
	Index     int       `json:"index"` // from 0
	Of        int       `json:"of"`
	StartedAt time.Time `json:"started_at"`
	// EndsAt is when its planned load ends; zero when only the load decides.
	EndsAt time.Time `json:"ends_at,omitzero"`
}

// PhaseStart is a phase beginning.
type PhaseStart struct {
	Name string    `json:"name"`
	At   time.Time `json:"at"`
	// BoundRPS is the phase's Little's-law bound at the size that runs
	// (quick or full); 0 when the phase states none.
	BoundRPS float64 `json:"bound_rps,omitempty"`
}

// Links are a run's report and result, served by the page.
type Links struct {
	HTML string `json:"html"`
	JSON string `json:"json"`
}

// LiveBoard is the board from start to now, refreshing every 5 s.
func LiveBoard(board string, start time.Time) string {
	if board == "" {
		return ""
	}
	sep := "?"
	if strings.Contains(board, "?") {
		sep = "&"
	}
	return fmt.Sprintf("%s%sfrom=%d&to=now&refresh=5s", board, sep, start.UnixMilli())
}
