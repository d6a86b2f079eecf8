package scenario

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"github.com/orderlab/orderlab/loadtest/attack"
)

// ConfigOf turns a phase into a loadtest configuration against base: what
// the phase's load leaves out (or sets to 0) keeps attack.Defaults.
func ConfigOf(p Phase, base string) attack.Config {
	l := p.Load
	cfg := attack.Defaults(attack.Mode(l.Mode))
	cfg.Target.Method = cmp.Or(p.Request.Method, cfg.Target.Method)
	cfg.Target.URL = strings.TrimRight(base, "/") + p.Request.Path
	cfg.Target.Body = attack.BodyFor(cfg.Target.Method)
	cfg.Concurrency, cfg.Requests, cfg.Duration = l.Concurrency, l.Requests, l.Duration.D()
	cfg.Timeout = cmp.Or(l.Timeout.D(), cfg.Timeout)
	cfg.Retries = cmp.Or(l.Retries, cfg.Retries)
	cfg.Retry = cmp.Or(attack.RetryPolicy(l.Retry), cfg.Retry)
	cfg.RetryMaxWait = cmp.Or(l.RetryMaxWait.D(), cfg.RetryMaxWait)
	if cfg.Mode == attack.ModeBurst && l.Warmup != nil {
		cfg.Warmup = *l.Warmup
	}
	if cfg.Mode == attack.ModeOpen {
		cfg.Pacer = attack.NewPacer(l.Rate, l.RampFrom, l.Ramp.D())
	}
	return cfg
}

// SLOOf joins the SLO terms of the expectations that apply to target in
// phase p (a quick run: those judged at quick size), each stated against
// the bound resolved with p's.
func SLOOf(s Scenario, quick bool, p Phase, target string) (string, error) {
	var terms []string
	bound := 0.0
	if p.Bound != nil {
		bound = p.Bound.RPS()
	}
	for _, e := range s.Expect {
		if e.SLO != "" && Judged(e, quick) && (e.Target == "" || e.Target == target) && (e.Phase == "" || e.Phase == p.Name) {
			slo, err := ResolveSLO(e.SLO, bound)
			if err != nil {
				return "", err
			}
			terms = append(terms, slo)
		}
	}
	return strings.Join(terms, ","), nil
}

// EnvOf is the env phase i of s runs with: the scenario's, or that of the
// phase it continues, with the phase's own on top.
func EnvOf(s Scenario, i int) map[string]string {
	start := i
	for start > 0 && s.Phases[start].Continue {
		start--
	}
	env := Merged(s.Env, nil)
	for _, p := range s.Phases[start : i+1] {
		maps.Copy(env, p.Env)
	}
	return env
}

// Merged is a copy of a with b on top (never nil).
func Merged(a, b map[string]string) map[string]string {
	m := maps.Clone(a)
	if m == nil {
		m = map[string]string{}
	}
	maps.Copy(m, b)
	return m
}

// EnvString is env as the logs and reports say it: "A=1 B=2", sorted.
func EnvString(env map[string]string) string {
	if len(env) == 0 {
		return "the defaults"
	}
	parts := make([]string, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		parts = append(parts, k+"="+env[k])
	}
	return strings.Join(parts, " ")
}
