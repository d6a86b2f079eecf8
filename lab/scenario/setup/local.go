package setup

import (
	"context"
	"fmt"
	"io"

	"github.com/orderlab/orderlab/lab/knobs"
	"github.com/orderlab/orderlab/lab/local"
	"github.com/orderlab/orderlab/lab/scenario"
	"github.com/orderlab/orderlab/lab/scenario/observe"
)

// localToken is the ADMIN_TOKEN of the services a local run starts: a
// continuing phase changes their knobs with it (setKnobs).
const localToken = "orderlab-scenario"

// Local runs a scenario on services it starts itself from BinDir (make
// build), on free loopback ports with each phase's env, against a
// database it creates on DatabaseURL's server (a user that may CREATE
// DATABASE) and drops afterwards.
type Local struct {
	BinDir      string
	DatabaseURL string
}

// Check: every scenario runs locally.
func (Local) Check(scenario.Scenario) error { return nil }

// Local is true: the services are the runner's own.
func (Local) Local() bool { return true }

// Setup makes the local setup of s; it starts nothing yet.
func (m Local) Setup(_ context.Context, s scenario.Scenario, logDir string, log io.Writer) (Setup, error) {
	return &localSetup{s: s, binDir: m.BinDir, dbURL: m.DatabaseURL, logDir: logDir, log: log, kept: map[string]*local.Lab{}}, nil
}

// localSetup runs a scenario on services it starts itself (Local),
// against a database of its own (backend). Each target runs alone,
// started for its run with the phase's env, and stopped after it unless
// the next phase continues on it: meanwhile the other services hold no
// connections and no CPU, and every run that is not a continuation starts
// from a fresh process (a clean RSS baseline).
type localSetup struct {
	s             scenario.Scenario
	binDir, dbURL string
	logDir        string // the services' logs
	log           io.Writer
	be            *backend              // made for the first phase that runs services
	env           map[string]string     // the knobs of the phase being set up
	kept          map[string]*local.Lab // by target: what a continuing phase runs on
}

// Phase makes the scenario's database, the first time.
func (l *localSetup) Phase(ctx context.Context, _ int, env map[string]string) error {
	l.env = env
	if l.be != nil {
		return nil
	}
	var err error
	l.be, err = newBackend(ctx, l.dbURL, l.s, l.log)
	return err
}

// Target starts name for its run of phase i with the phase's env and
// database latency, or, when the phase continues, changes the knobs the
// phase sets on the service the phase before left running.
func (l *localSetup) Target(ctx context.Context, i int, name string) (*Ready, error) {
	p := l.s.Phases[i]
	running := l.kept[name]
	delete(l.kept, name)
	if !p.Continue && running != nil {
		l.stop(name, running)
		running = nil
	}
	fail := func(err error) (*Ready, error) {
		if running != nil {
			l.stop(name, running)
		}
		return nil, err
	}
	if err := l.be.setLatency(p); err != nil {
		return fail(err)
	}
	replicas := 1
	if l.s.Cluster != nil {
		replicas = max(1, l.s.Cluster.Replicas)
	}
	if running == nil {
		how := ""
		if replicas > 1 {
			how = fmt.Sprintf("%d replicas of ", replicas)
		}
		if p.PgBouncer {
			how = "through PgBouncer, " + how
		}
		fmt.Fprintf(l.log, "   starting %s%s with %s\n", how, name, scenario.EnvString(l.env))
		var err error
		running, err = local.Start(ctx, local.Config{BinDir: l.binDir, Services: []string{name}, Env: l.env,
			Database: l.be.urlFor(p), LogDir: l.logDir, Replicas: replicas, AdminToken: localToken})
		if err != nil {
			return nil, err
		}
	} else if p.Continue && len(p.Env) > 0 {
		if err := l.setKnobs(ctx, name, running, p.Env); err != nil {
			return fail(err)
		}
	}
	svc := running.Services[0]
	st := &Ready{URL: svc.URL, Metrics: svc.MetricsURL, Admin: svc.AdminURL}
	var front *local.Balancer
	if len(running.Services) > 1 {
		var err error
		if front, err = local.Balance(running.Services); err != nil {
			return fail(err)
		}
		st.URL = front.URL
		for _, other := range running.Services[1:] {
			st.More = append(st.More, other.MetricsURL)
		}
	}
	if p.DBStop != nil && l.be.cluster != nil {
		o := localOutage(l.be, p.DBStop.For.D())
		st.Outage = &o
	}
	keep := i+1 < len(l.s.Phases) && l.s.Phases[i+1].Continue
	st.Done = func(ok bool) {
		if front != nil {
			_ = front.Close()
		}
		if keep && ok {
			l.kept[name] = running
		} else {
			l.stop(name, running)
		}
	}
	return st, nil
}

// Watch watches the scenario's database, and PgBouncer when the phase
// goes through it.
func (l *localSetup) Watch(ctx context.Context, i int, target string) *observe.PostgresWatch {
	return l.be.watchTarget(ctx, l.dbURL, target, l.s.Phases[i].PgBouncer)
}

// Close stops what a failed run left running and drops the database.
func (l *localSetup) Close(ctx context.Context) error {
	for name, running := range l.kept {
		l.stop(name, running)
	}
	clear(l.kept)
	if l.be == nil {
		return nil
	}
	return l.be.close(ctx)
}

// setKnobs changes the knobs of env that exist on target on every process
// of running, and waits until each change shows.
func (l *localSetup) setKnobs(ctx context.Context, target string, running *local.Lab, env map[string]string) error {
	set := map[string]string{}
	for name, v := range env {
		if scenario.AppliesTo(name, target) {
			set[name] = v
		}
	}
	if len(set) == 0 {
		return nil
	}
	for _, svc := range running.Services {
		c := &knobs.Client{Admin: svc.AdminURL, Token: localToken}
		if _, err := c.Patch(ctx, set); err != nil {
			return fmt.Errorf("%s: %w", svc.Name, err)
		}
		if err := c.Wait(ctx, set, knobWait); err != nil {
			return fmt.Errorf("%s: %w", svc.Name, err)
		}
	}
	fmt.Fprintf(l.log, "   %s: live %s\n", target, scenario.EnvString(set))
	return nil
}

func (l *localSetup) stop(name string, running *local.Lab) {
	if err := running.Stop(); err != nil {
		fmt.Fprintf(l.log, "   stopping %s: %v\n", name, err)
	}
}
