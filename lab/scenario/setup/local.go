package scenario

import (
	"context"
	"fmt"
	"io"

	"github.com/orderlab/orderlab/lab/knobs"
	"github.com/orderlab/orderlab/lab/local"
)

// localToken is the ADMIN_TOKEN of the services a local run starts: a
// continuing phase changes their knobs with it (setKnobs).
const localToken = "orderlab-scenario"

// localStager stages a scenario on services it starts itself (BinDir),
// against a database of its own (backend). Each target runs alone,
// started for its run with the phase's env, and stopped after it unless
// the next phase continues on it: meanwhile the other services hold no
// connections and no CPU, and every run that is not a continuation starts
// from a fresh process (a clean RSS baseline).
type localStager struct {
	s             Scenario
	binDir, dbURL string
	logDir        string // the services' logs
	log           io.Writer
	be            *backend              // made for the first phase that runs services
	env           map[string]string     // the knobs of the phase being staged
	kept          map[string]*local.Lab // by target: what a continuing phase runs on
}

func newLocalStager(r *Runner, s Scenario, logDir string) *localStager {
	return &localStager{s: s, binDir: r.BinDir, dbURL: r.DatabaseURL, logDir: logDir, log: r.Log, kept: map[string]*local.Lab{}}
}

// phase makes the scenario's database, the first time.
func (l *localStager) phase(ctx context.Context, _ int, env map[string]string) error {
	l.env = env
	if l.be != nil {
		return nil
	}
	var err error
	l.be, err = newBackend(ctx, l.dbURL, l.s, l.log)
	return err
}

// target starts name for its run of phase i with the phase's env and
// database latency, or, when the phase continues, changes the knobs the
// phase sets on the service the phase before left running.
func (l *localStager) target(ctx context.Context, i int, name string) (*staged, error) {
	p := l.s.Phases[i]
	running := l.kept[name]
	delete(l.kept, name)
	if !p.Continue && running != nil {
		l.stop(name, running)
		running = nil
	}
	fail := func(err error) (*staged, error) {
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
		fmt.Fprintf(l.log, "   starting %s%s with %s\n", how, name, envString(l.env))
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
	st := &staged{url: svc.URL, metrics: svc.MetricsURL}
	var front *local.Balancer
	if len(running.Services) > 1 {
		var err error
		if front, err = local.Balance(running.Services); err != nil {
			return fail(err)
		}
		st.url = front.URL
		for _, other := range running.Services[1:] {
			st.more = append(st.more, other.MetricsURL)
		}
	}
	if p.DBStop != nil && l.be.cluster != nil {
		o := localOutage(l.be, p.DBStop.For.D())
		st.outage = &o
	}
	keep := i+1 < len(l.s.Phases) && l.s.Phases[i+1].Continue
	st.done = func(ok bool) {
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

// watch watches the scenario's database, and PgBouncer when the phase
// goes through it.
func (l *localStager) watch(ctx context.Context, i int, target string) *pgWatch {
	return l.be.watchTarget(ctx, l.dbURL, target, l.s.Phases[i].PgBouncer)
}

// close stops what a failed run left running and drops the database.
func (l *localStager) close(ctx context.Context) error {
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
func (l *localStager) setKnobs(ctx context.Context, target string, running *local.Lab, env map[string]string) error {
	set := map[string]string{}
	for name, v := range env {
		if appliesTo(name, target) {
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
	fmt.Fprintf(l.log, "   %s: live %s\n", target, envString(set))
	return nil
}

func (l *localStager) stop(name string, running *local.Lab) {
	if err := running.Stop(); err != nil {
		fmt.Fprintf(l.log, "   stopping %s: %v\n", name, err)
	}
}
