package setup

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/orderlab/orderlab/lab/scenario"
	"github.com/orderlab/orderlab/lab/scenario/observe"
)

// Endpoint is a running service the runner did not start (the compose lab).
type Endpoint struct {
	URL        string // API base, e.g. http://127.0.0.1:8081
	MetricsURL string // its /metrics
	// AdminURL is its admin listener (GET/PATCH /knobs), e.g.
	// http://127.0.0.1:9091; empty: a phase that sets knobs fails.
	AdminURL string
}

// Lab runs a scenario on running services (the running lab), which it
// does not start: each phase's env is applied through their knob API with
// Token (their ADMIN_TOKEN) and every knob changed is put back at the end,
// also on a failure, Ctrl-C or a panic (docs/lab-scenarios.md). A scenario
// that needs what running services cannot give (scenario.InLab) is
// refused.
type Lab struct {
	Endpoints map[string]Endpoint
	Token     string
	// DBProxy, when set, is the running lab's database fault proxy, which
	// runs db_latency and db_stop (an outage of the proxy) there.
	DBProxy *LabProxy
	// AllowRemote lets Endpoints be outside the loopback interface (the
	// compose network's service names).
	AllowRemote bool
}

// Check refuses what running services cannot give (scenario.InLab).
func (m *Lab) Check(s scenario.Scenario) error {
	if ok, why := scenario.InLab(s); !ok {
		return fmt.Errorf("%s cannot run against running services: it %s (docs/lab-scenarios.md)", s.Name, why)
	}
	return nil
}

// Local is false: the services are the lab's.
func (m *Lab) Local() bool { return false }

// Setup makes the lab setup of s, and checks the lab's database proxy
// when s needs it.
func (m *Lab) Setup(ctx context.Context, s scenario.Scenario, _ string, log io.Writer) (Setup, error) {
	l := &labSetup{s: s, eps: m.Endpoints, knobs: newLiveKnobs(m.Endpoints, m.Token, log), proxy: m.DBProxy,
		allowRemote: m.AllowRemote, log: log}
	if scenario.NeedsProxy(s) {
		if err := l.checkProxy(ctx); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// labSetup runs a scenario on running services (Lab): each phase's env
// goes to their knob API (liveKnobs),
// db_latency and db_stop to the lab's database proxy, and every knob
// changed and the proxy's latency are put back at the end
// (docs/lab-scenarios.md).
type labSetup struct {
	s           scenario.Scenario
	eps         map[string]Endpoint
	knobs       *liveKnobs
	proxy       *LabProxy // nil: not known
	allowRemote bool
	log         io.Writer
}

// Phase sets env on every target, unless the phase continues on the
// knobs of the one before and sets none of its own.
func (l *labSetup) Phase(ctx context.Context, i int, env map[string]string) error {
	if p := l.s.Phases[i]; p.Continue && len(p.Env) == 0 {
		return nil
	}
	return l.knobs.apply(ctx, l.s.Targets, env)
}

// Target gives the proxy phase i's latency, when the scenario uses it.
func (l *labSetup) Target(ctx context.Context, i int, name string) (*Ready, error) {
	ep, ok := l.eps[name]
	if !ok {
		return nil, fmt.Errorf("no endpoint for target %s (-target %s=URL)", name, name)
	}
	p := l.s.Phases[i]
	if scenario.NeedsProxy(l.s) {
		if err := l.setProxyLatency(ctx, p); err != nil {
			return nil, err
		}
	}
	st := &Ready{URL: ep.URL, Metrics: ep.MetricsURL, Admin: ep.AdminURL, AllowRemote: l.allowRemote, Done: func(bool) {}}
	if p.DBStop != nil && l.proxy != nil {
		o := labOutage(l.proxy, p.DBStop.For.D(), l.log)
		st.Outage = &o
	}
	return st, nil
}

// Watch: the lab's Postgres is not watched.
func (l *labSetup) Watch(context.Context, int, string) *observe.PostgresWatch { return nil }

// Close clears the proxy's latency and restores every knob changed.
func (l *labSetup) Close(ctx context.Context) error {
	var err error
	if scenario.NeedsProxy(l.s) {
		if cerr := l.setProxyLatency(ctx, scenario.Phase{}); cerr != nil {
			err = fmt.Errorf("clearing the database proxy's latency: %w", cerr)
		}
	}
	return errors.Join(err, l.knobs.restore(ctx))
}
