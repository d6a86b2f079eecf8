package scenario

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// labStager stages a scenario on running services (the compose lab,
// Runner.Endpoints): each phase's env goes to their knob API (liveKnobs),
// db_latency and db_stop to the lab's database proxy, and every knob
// changed and the proxy's latency are put back at the end
// (docs/lab-scenarios.md).
type labStager struct {
	s     Scenario
	eps   map[string]Endpoint
	knobs *liveKnobs
	proxy *LabProxy // nil: not known
	log   io.Writer
}

// newLabStager checks the lab's database proxy when s needs it.
func newLabStager(ctx context.Context, r *Runner, s Scenario) (*labStager, error) {
	l := &labStager{s: s, eps: r.Endpoints, knobs: newLiveKnobs(r.Endpoints, r.Token, r.Log), proxy: r.DBProxy, log: r.Log}
	if needsProxy(s) {
		if err := l.checkProxy(ctx); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// phase sets env on every target, unless the phase continues on the
// knobs of the one before and sets none of its own.
func (l *labStager) phase(ctx context.Context, i int, env map[string]string) error {
	if p := l.s.Phases[i]; p.Continue && len(p.Env) == 0 {
		return nil
	}
	return l.knobs.apply(ctx, l.s.Targets, env)
}

// target gives the proxy phase i's latency, when the scenario uses it.
func (l *labStager) target(ctx context.Context, i int, name string) (*staged, error) {
	ep, ok := l.eps[name]
	if !ok {
		return nil, fmt.Errorf("no endpoint for target %s (-target %s=URL)", name, name)
	}
	p := l.s.Phases[i]
	if needsProxy(l.s) {
		if err := l.setProxyLatency(ctx, p); err != nil {
			return nil, err
		}
	}
	st := &staged{url: ep.URL, metrics: ep.MetricsURL, done: func(bool) {}}
	if p.DBStop != nil && l.proxy != nil {
		o := labOutage(l.proxy, p.DBStop.For.D(), l.log)
		st.outage = &o
	}
	return st, nil
}

// watch: the lab's Postgres is not watched.
func (l *labStager) watch(context.Context, int, string) *pgWatch { return nil }

// close clears the proxy's latency and restores every knob changed.
func (l *labStager) close(ctx context.Context) error {
	var err error
	if needsProxy(l.s) {
		if cerr := l.setProxyLatency(ctx, Phase{}); cerr != nil {
			err = fmt.Errorf("clearing the database proxy's latency: %w", cerr)
		}
	}
	return errors.Join(err, l.knobs.restore(ctx))
}
