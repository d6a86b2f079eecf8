package scenario

import "context"

// stager puts a scenario's phases on the services they measure, and
// everything back at the end, so that one phase loop (Runner.phase) runs a
// local run and a run against the lab alike: localStager starts the
// services for each phase (stagelocal.go), labStager changes the knobs of
// the running ones (stagelab.go). A stager is made for one scenario and
// takes its phases by index.
type stager interface {
	// phase readies every target for phase i, which runs with env (its
	// knobs, envOf), before the first of its runs.
	phase(ctx context.Context, i int, env map[string]string) error
	// target readies one target for its run of phase i, right before it.
	target(ctx context.Context, i int, name string) (*staged, error)
	// watch starts what Postgres (and PgBouncer) is watched by during a
	// target's run of phase i (nil: it is not).
	watch(ctx context.Context, i int, target string) *pgWatch
	// close puts back everything staged and stops what was started. It
	// runs after a failed phase, Ctrl-C and a panic too, on a ctx without
	// cancel.
	close(ctx context.Context) error
}

// staged is a target ready for its run of a phase.
type staged struct {
	url, metrics string   // where the load goes; the target's /metrics
	more         []string // the /metrics of its other replicas, summed with it
	// outage is how a db_stop stops the database here; nil: it is not
	// stopped.
	outage *outageOf
	// done is called after the run (ok: it went through): the target is
	// kept for a phase that continues on it, or put away.
	done func(ok bool)
}

// stager is how this runner stages s: on the running services of
// Endpoints when set, else on services it starts itself.
func (r *Runner) stager(ctx context.Context, s Scenario, logDir string) (stager, error) {
	if r.Endpoints == nil {
		return newLocalStager(r, s, logDir), nil
	}
	l, err := newLabStager(ctx, r, s)
	if err != nil {
		return nil, err
	}
	return l, nil
}
