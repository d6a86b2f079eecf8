package scenario

import (
	"cmp"
	"strconv"
	"time"
)

// quickPool caps the pool-sized knobs in quick mode, so that a smoke run
// fits beside other users of a shared Postgres.
const quickPool = 5

// poolKnobs are sized against DB_MAX_CONNS (WORKERS may not exceed it).
var poolKnobs = []string{"DB_MAX_CONNS", "WORKERS", "LIMIT"}

// Quick returns s shortened to a few seconds a phase, for tests and smoke
// runs: at most 2 s, 50 connections, 200 requests, 200 requests/s, database
// pools (and WORKERS, LIMIT) of at most 5, and task pools fed at most 16 jobs a worker. Knobs and per-request delays are kept, so the
// same code paths run; the figures mean nothing.
func Quick(s Scenario) Scenario {
	s.Env = capPools(s.Env)
	s.Env["DB_MAX_CONNS"] = cmp.Or(s.Env["DB_MAX_CONNS"], strconv.Itoa(quickPool))
	phases := make([]Phase, len(s.Phases))
	for i, p := range s.Phases {
		if p.Load != nil {
			l := *p.Load
			l.Concurrency = min(l.Concurrency, 50)
			if l.Duration > 0 {
				l.Duration = min(l.Duration, Duration(2*time.Second))
			}
			if l.Requests > 0 {
				l.Requests = min(l.Requests, 200)
			}
			if l.Rate > 0 {
				l.Rate = min(l.Rate, 200)
				l.RampFrom = min(l.RampFrom, l.Rate)
			}
			l.Ramp = min(l.Ramp, Duration(time.Second))
			p.Load = &l
		}
		p.Env = capPools(p.Env)
		if p.Tasks != nil {
			t := *p.Tasks
			if t.Workers > 0 {
				t.Jobs = min(t.Jobs, 16*t.Workers)
			} else {
				t.Jobs = min(t.Jobs, 1000)
			}
			p.Tasks = &t
		}
		phases[i] = p
	}
	s.Phases = phases
	return s
}

// capPools copies env with the pool-sized knobs capped at quickPool. A
// smaller pool is kept (a scenario may need one smaller than its threads);
// Quick sets the scenario's pool to quickPool when it does not set one (the
// default 20).
func capPools(env map[string]string) map[string]string {
	env = merged(env, nil)
	for _, k := range poolKnobs {
		if n, err := strconv.Atoi(env[k]); err == nil && n > quickPool {
			env[k] = strconv.Itoa(quickPool)
		}
	}
	return env
}
