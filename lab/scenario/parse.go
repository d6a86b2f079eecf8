package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/orderlab/orderlab/loadtest/attack"
	"github.com/orderlab/orderlab/loadtest/report"
)

// Parse reads one scenario file (YAML) strictly: an unknown field is an
// error. It validates the result.
func Parse(data []byte) (Scenario, error) {
	var s Scenario
	dec := yaml.NewDecoder(bytes.NewReader(data), yaml.DisallowUnknownField())
	if err := dec.Decode(&s); err != nil {
		return Scenario{}, errors.New(yaml.FormatError(err, false, true))
	}
	return s, s.Validate()
}

// Validate reports every problem with s, each naming its place.
func (s Scenario) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if s.Name == "" || strings.ContainsAny(s.Name, " /") {
		bad("name %q: want a file-name-like word", s.Name)
	}
	if s.Title == "" || s.Question == "" || s.Reproduces == "" {
		bad("title, question and reproduces are required")
	}
	if s.QuickFactor != 0 && s.QuickFactor < 1 || s.QuickDuration < 0 {
		bad("quick_factor %v, quick_duration %s: want a factor of at least 1 and a positive duration", s.QuickFactor, s.QuickDuration.D())
	}
	if s.Kind != "" && !slices.Contains(Kinds, s.Kind) {
		bad("kind %q: want one of %v", s.Kind, Kinds)
	}
	if len(s.Phases) == 0 {
		bad("no phases")
	}
	http := false
	for _, p := range s.Phases {
		http = http || p.Tasks == nil
	}
	if http && len(s.Panels) == 0 {
		bad("no panels: name the board panels to look at")
	}
	if http && len(s.Targets) == 0 {
		bad("targets: an HTTP phase needs at least one")
	}
	for _, t := range s.Targets {
		if !slices.Contains(Services, t) {
			bad("targets: %q is not one of %v", t, Services)
		}
	}
	errs = append(errs, s.validateEnv("env", s.Env)...)
	seen := map[string]bool{}
	for i, p := range s.Phases {
		where := fmt.Sprintf("phases[%d] %q", i, p.Name)
		if p.Name == "" || seen[p.Name] {
			bad("%s: a phase needs a name of its own", where)
		}
		seen[p.Name] = true
		if p.Continue && (i == 0 || s.Phases[i-1].Tasks != nil || p.Tasks != nil) {
			bad("%s: continue needs an HTTP phase before it and runs HTTP load (it runs on that phase's services)", where)
		}
		if p.Continue {
			for _, name := range slices.Sorted(maps.Keys(p.Env)) {
				if k, ok := KnobNamed(name); ok && k.Restart != "" {
					bad("%s: continue changes knobs live, and %s cannot change live: %s", where, name, k.Restart)
				}
			}
		}
		errs = append(errs, s.validateEnv(where+".env", p.Env)...)
		errs = append(errs, p.validate(where)...)
	}
	errs = append(errs, s.validateCluster()...)
	for i, e := range s.Expect {
		where := fmt.Sprintf("expect[%d]", i)
		if e.Says == "" {
			bad("%s: says is required", where)
		}
		if e.Target != "" && !slices.Contains(s.Targets, e.Target) {
			bad("%s: target %q is not among the targets", where, e.Target)
		}
		if e.Phase != "" && !seen[e.Phase] {
			bad("%s: no phase %q", where, e.Phase)
		}
		slo, err := ResolveSLO(e.SLO, 1)
		if err == nil {
			_, err = report.ParseSLO(slo)
		}
		if err != nil {
			bad("%s: slo: %v", where, err)
			continue
		}
		_, vs, _ := SplitVersus(e.SLO)
		for _, v := range vs {
			if !seen[v.Phase] || v.Phase == e.Phase {
				bad("%s: slo %q: no other phase %q to hold it to", where, v.Text, v.Phase)
			}
		}
		for _, p := range s.Phases {
			if p.Tasks == nil && p.Bound == nil && (e.Phase == "" || e.Phase == p.Name) {
				if _, err := ResolveSLO(e.SLO, 0); err != nil {
					bad("%s: slo, phase %s: %v", where, p.Name, err)
				}
			}
		}
	}
	return errors.Join(errs...)
}

func (s Scenario) validateEnv(where string, env map[string]string) []error {
	var errs []error
	for name, v := range env {
		k, ok := KnobNamed(name)
		if !ok {
			errs = append(errs, fmt.Errorf("%s: %s is not a documented knob", where, name))
			continue
		}
		if v == "" {
			errs = append(errs, fmt.Errorf("%s: %s is empty", where, name))
		}
		if k.Services != nil && !slices.ContainsFunc(s.Targets, func(t string) bool { return slices.Contains(k.Services, t) }) {
			errs = append(errs, fmt.Errorf("%s: %s applies to %v, none of them a target", where, name, k.Services))
		}
	}
	return errs
}

func (p Phase) validate(where string) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(where+": "+format, args...)) }
	if p.Bound != nil && (p.Bound.Concurrency < 1 || p.Bound.Hold <= 0 || p.Bound.What == "") {
		bad("bound needs concurrency, hold and what")
	}
	if p.Tasks != nil {
		if p.Request != nil || p.Load != nil {
			bad("a tasks phase has no request or load")
		}
		t := p.Tasks
		if t.Jobs < 1 || t.Workers < -1 || (t.Sleep <= 0) == (t.Rounds <= 0) {
			bad("tasks need jobs >= 1, workers >= -1 and exactly one of sleep and rounds")
		}
		return errs
	}
	if p.Request == nil || p.Load == nil {
		bad("an HTTP phase needs request and load")
		return errs
	}
	switch p.Request.Method {
	case "", "GET", "POST":
	default:
		bad("method %q: want GET or POST", p.Request.Method)
	}
	u, err := url.Parse(p.Request.Path)
	if err != nil || !strings.HasPrefix(p.Request.Path, "/") || u.Host != "" {
		bad("path %q: want an absolute path with an optional query", p.Request.Path)
	} else {
		allowed, known := QueryParams[u.Path]
		if !known {
			bad("path %s: not an endpoint that takes load (%v)", u.Path, slices.Sorted(maps.Keys(QueryParams)))
		}
		for q := range u.Query() {
			if !slices.Contains(allowed, q) {
				bad("path %s: query parameter %q is not one it reads (%v)", u.Path, q, allowed)
			}
		}
		if (u.Path == "/orders") != (p.Request.Method == "POST") {
			bad("POST goes to /orders, and /orders takes POST")
		}
	}
	l := p.Load
	switch l.Mode {
	case "burst":
	case "closed":
		if l.Requests <= 0 && l.Duration <= 0 {
			bad("a closed load needs requests or duration")
		}
	case "open":
		if l.Rate <= 0 || (l.Requests <= 0 && l.Duration <= 0) {
			bad("an open load needs a rate and requests or duration")
		}
	case "idle":
		if l.Duration <= 0 || l.Requests > 0 || l.Retry != "" {
			bad("an idle load needs a duration (the hold), and no requests or retry")
		}
	default:
		bad("load.mode %q: want burst, closed, open or idle", l.Mode)
	}
	if l.Retry != "" && !slices.Contains(attack.RetryPolicies, attack.RetryPolicy(l.Retry)) {
		bad("load.retry %q: want one of %v", l.Retry, attack.RetryPolicies)
	}
	if l.Retry != "" && l.Mode == "burst" {
		bad("load.retry: not for a burst, which measures one round")
	}
	if l.Retries < 0 || l.RetryMaxWait < 0 {
		bad("load.retries and load.retry_max_wait must not be negative")
	}
	if l.Scrape != 0 && (l.Scrape < Duration(10*time.Millisecond) || l.Scrape > Duration(10*time.Second)) {
		bad("load.scrape %s: want 10ms..10s (default %s)", l.Scrape.D(), DefaultScrape)
	}
	if l.Concurrency < 1 || l.Concurrency > 19_000 {
		bad("load.concurrency %d: want 1..19000 (the open-files limit)", l.Concurrency)
	}
	return errs
}

// validateCluster checks the cluster block and the phases that use it.
func (s Scenario) validateCluster() []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	c := s.Cluster
	owned := c != nil && c.Owned
	if c != nil {
		if (c.Role != nil || c.PgBouncer != nil) && !c.Owned {
			bad("cluster: a role and pgbouncer need owned: true (never on the shared server)")
		}
		if c.Role != nil && c.Role.ConnectionLimit < 1 {
			bad("cluster.role.connection_limit %d: want at least 1", c.Role.ConnectionLimit)
		}
		if c.Replicas < 0 || c.Replicas > 8 {
			bad("cluster.replicas %d: want 1..8", c.Replicas)
		}
		if b := c.PgBouncer; b != nil && (b.Mode != "transaction" && b.Mode != "session" || b.Pool < 1) {
			bad("cluster.pgbouncer: want mode transaction or session and pool >= 1")
		}
	}
	for i, p := range s.Phases {
		where := fmt.Sprintf("phases[%d] %q", i, p.Name)
		if p.PgBouncer && (c == nil || c.PgBouncer == nil) {
			bad("%s: pgbouncer needs cluster.pgbouncer", where)
		}
		if p.Continue && i > 0 && p.PgBouncer != s.Phases[i-1].PgBouncer {
			bad("%s: a continuing phase keeps the pgbouncer setting of the phase before", where)
		}
		if p.DBLatency != nil && *p.DBLatency < 0 {
			bad("%s: db_latency must not be negative", where)
		}
		if d := p.DBStop; d != nil {
			if !owned {
				bad("%s: db_stop needs cluster.owned: true (the shared server is never stopped)", where)
			}
			if d.After <= 0 || d.For <= 0 || d.Ledger < 1 || p.Load == nil || p.Load.Duration <= 0 {
				bad("%s: db_stop needs after, for, ledger >= 1 and a load with a duration", where)
			}
		}
	}
	return errs
}
