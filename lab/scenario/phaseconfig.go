package scenario

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/orderlab/orderlab/lab/tasks"
	"github.com/orderlab/orderlab/loadtest/attack"
)

// configOf turns a phase into a loadtest configuration against base: what
// the phase's load leaves out (or sets to 0) keeps attack.Defaults.
func configOf(p Phase, base string) attack.Config {
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

// sloOf joins the SLO terms of the expectations that apply to target in
// phase p (a quick run: those judged at quick size), each stated against
// the bound resolved with p's.
func sloOf(s Scenario, quick bool, p Phase, target string) (string, error) {
	var terms []string
	bound := 0.0
	if p.Bound != nil {
		bound = p.Bound.RPS()
	}
	for _, e := range s.Expect {
		if e.SLO != "" && judged(e, quick) && (e.Target == "" || e.Target == target) && (e.Phase == "" || e.Phase == p.Name) {
			slo, err := resolveSLO(e.SLO, bound)
			if err != nil {
				return "", err
			}
			terms = append(terms, slo)
		}
	}
	return strings.Join(terms, ","), nil
}

// runTasks runs an in-process tasks phase.
func runTasks(t Tasks) *TasksResult {
	job := tasks.Sleep(t.Sleep.D())
	if t.Rounds > 0 {
		job = tasks.SHA256Chain(t.Rounds)
	}
	var st tasks.Stats
	if t.Workers == 0 {
		st = tasks.Goroutines(t.Jobs, job)
	} else {
		st = tasks.Pool(t.Workers, t.Jobs, job) // -1: GOMAXPROCS
	}
	tr := &TasksResult{Stats: st, ElapsedSeconds: st.Elapsed.Seconds()}
	if t.ScaleTo > t.Jobs {
		tr.ScaledSeconds = tr.ElapsedSeconds * float64(t.ScaleTo) / float64(t.Jobs)
	}
	if t.Sleep > 0 {
		rounds := 1.0
		if st.Workers > 0 {
			rounds = math.Ceil(float64(max(t.ScaleTo, t.Jobs)) / float64(st.Workers))
		}
		tr.BoundSeconds = rounds * t.Sleep.D().Seconds()
	}
	return tr
}

// envOf is the env phase i of s runs with: the scenario's, or that of the
// phase it continues, with the phase's own on top.
func envOf(s Scenario, i int) map[string]string {
	start := i
	for start > 0 && s.Phases[start].Continue {
		start--
	}
	env := merged(s.Env, nil)
	for _, p := range s.Phases[start : i+1] {
		maps.Copy(env, p.Env)
	}
	return env
}

func merged(a, b map[string]string) map[string]string {
	m := maps.Clone(a)
	if m == nil {
		m = map[string]string{}
	}
	maps.Copy(m, b)
	return m
}

func envString(env map[string]string) string {
	if len(env) == 0 {
		return "the defaults"
	}
	parts := make([]string, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		parts = append(parts, k+"="+env[k])
	}
	return strings.Join(parts, " ")
}
