// Package setup readies the services a scenario's phases run on, and puts
// everything back at the end, so that one phase loop (package run) runs a
// local run and a run against the lab alike. A Mode is where: Local starts
// the services for each phase against a database of its own; Lab changes
// the knobs of running ones (the compose lab) and reaches the lab's
// database proxy for db_latency and db_stop. A Mode makes a Setup for one
// scenario, which takes its phases by index.
package setup

import (
	"context"
	"io"

	"github.com/orderlab/orderlab/lab/scenario"
	"github.com/orderlab/orderlab/lab/scenario/observe"
)

// Mode is where a runner runs scenarios: Local or Lab.
type Mode interface {
	// Check refuses s when it cannot run here, saying why; nil: it can.
	Check(s scenario.Scenario) error
	// Setup readies what s's phases need here. The services it starts
	// log under logDir; what it does is said on log.
	Setup(ctx context.Context, s scenario.Scenario, logDir string, log io.Writer) (Setup, error)
	// Local says whether the services are the runner's own.
	Local() bool
}

// Setup puts one scenario's phases on the services they measure.
type Setup interface {
	// Phase readies every target for phase i, which runs with env (its
	// knobs, scenario.EnvOf), before the first of its runs.
	Phase(ctx context.Context, i int, env map[string]string) error
	// Target readies one target for its run of phase i, right before it.
	Target(ctx context.Context, i int, name string) (*Ready, error)
	// Watch starts what Postgres (and PgBouncer) is watched by during a
	// target's run of phase i (nil: it is not).
	Watch(ctx context.Context, i int, target string) *observe.PostgresWatch
	// Close puts back everything set up and stops what was started. It
	// runs after a failed phase, Ctrl-C and a panic too, on a ctx without
	// cancel.
	Close(ctx context.Context) error
}

// Ready is a target ready for its run of a phase.
type Ready struct {
	URL, Metrics string // where the load goes; the target's /metrics
	// Admin is the target's admin listener (http://127.0.0.1:9091), where
	// its flight recorder's window is read; "" when not known. With
	// replicas, the first one's.
	Admin string
	More  []string // the /metrics of its other replicas, summed with it
	// AllowRemote lets URL be outside the loopback interface.
	AllowRemote bool
	// Outage is how a db_stop stops the database here; nil: it is not
	// stopped.
	Outage *Outage
	// Done is called after the run (ok: it went through): the target is
	// kept for a phase that continues on it, or put away.
	Done func(ok bool)
}
