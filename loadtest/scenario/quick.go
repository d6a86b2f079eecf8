package scenario

import (
	"strconv"
	"time"
)

// quickPool caps the pool-sized knobs in quick mode, so that a smoke run
// fits beside other users of a shared Postgres.
const quickPool = 5

// poolKnobs are sized against DB_MAX_CONNS (WORKERS may not exceed it).
var poolKnobs = []string{"DB_MAX_CONNS", "WORKERS", "LIMIT"}

// Quick returns s shortened to a few seconds a phase, for tests and smoke
// runs: at most 2 s (a db_stop phase: 3 s, Postgres down 0.5 s in for 1 s), 50 connections, 200 requests, 200 requests/s, database
// pools (and WORKERS, LIMIT) of 5, and task pools fed at most 16 jobs a worker. Knobs and per-request delays are kept, so the
// same code paths run; the figures mean nothing.
func Quick(s Scenario) Scenario {
	s.Env = capPools(s.Env, true)
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
			if p.DBStop != nil {
				// Down 0.5 s in, for 1 s, with 1.5 s of load after.
				d := *p.DBStop
				d.After, d.For = min(d.After, Duration(500*time.Millisecond)), min(d.For, Duration(time.Second))
				p.DBStop = &d
				l.Duration = d.After + d.For + Duration(1500*time.Millisecond)
			}
			p.Load = &l
		}
		p.Env = capPools(p.Env, false)
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

// capPools copies env with the pool-sized knobs capped at quickPool; the
// scenario's env (base) gets a pool of quickPool when it does not set one
// (the default 20). A phase's env keeps a smaller pool of its own.
func capPools(env map[string]string, base bool) map[string]string {
	env = merged(env, nil)
	for _, k := range poolKnobs {
		if n, err := strconv.Atoi(env[k]); err == nil && n > quickPool {
			env[k] = strconv.Itoa(quickPool)
		}
	}
	if _, ok := env["DB_MAX_CONNS"]; base && !ok {
		env["DB_MAX_CONNS"] = strconv.Itoa(quickPool)
	}
	return env
}
