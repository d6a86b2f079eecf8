package scenario

import (
	"cmp"
	"fmt"
)

// Describe is phase p's load, or its jobs, in words, as the reports say it:
// "closed, c=2000, 20s, POST /orders?db_delay=50ms".
func Describe(p Phase) string {
	if t := p.Tasks; t != nil {
		work := fmt.Sprintf("sleep %s", t.Sleep.D())
		if t.Rounds > 0 {
			work = fmt.Sprintf("%d SHA-256 rounds", t.Rounds)
		}
		who := "a goroutine each"
		switch {
		case t.Workers > 0:
			who = fmt.Sprintf("a pool of %d workers", t.Workers)
		case t.Workers < 0:
			who = "a pool of GOMAXPROCS workers"
		}
		return fmt.Sprintf("%d jobs (%s) on %s", t.Jobs, work, who)
	}
	if p.Request == nil || p.Load == nil {
		return ""
	}
	l := p.Load
	shape := ""
	switch l.Mode {
	case "burst":
		shape = fmt.Sprintf("burst of %d", l.Concurrency)
	case "closed":
		shape = fmt.Sprintf("closed, c=%d", l.Concurrency)
	case "open":
		shape = fmt.Sprintf("open, %.0f/s on at most %d connections", l.Rate, l.Concurrency)
		if l.Ramp > 0 {
			shape = fmt.Sprintf("open, %.0f→%.0f/s over %s on at most %d connections", l.RampFrom, l.Rate, l.Ramp.D(), l.Concurrency)
		}
	case "idle":
		shape = fmt.Sprintf("once on each of %d connections, then held idle", l.Concurrency)
	}
	if l.Duration > 0 {
		shape += ", " + l.Duration.D().String()
	}
	if l.Requests > 0 {
		shape += fmt.Sprintf(", %d requests", l.Requests)
	}
	switch l.Retry {
	case "immediate":
		shape += ", a 429/503 resent at once"
	case "honor":
		shape += ", a 429/503 resent after its Retry-After"
	case "budget":
		shape += ", a 429/503 resent at once within a retry budget"
	case "throttle":
		shape += ", attempts through an adaptive client-side throttler"
	case "token-bucket":
		shape += ", a 429/503 resent at once while gRPC's retry token bucket allows"
	}
	s := fmt.Sprintf("%s %s, %s", cmp.Or(p.Request.Method, "GET"), p.Request.Path, shape)
	if len(p.Env) > 0 {
		s += " (" + EnvString(p.Env) + ")"
	}
	if p.Continue {
		s += ", on the services of the phase before, still running"
	}
	if p.PgBouncer {
		s += ", through PgBouncer"
	}
	if p.DBLatency != nil {
		s += fmt.Sprintf(", %s more per round trip to Postgres", p.DBLatency.D())
	}
	if d := p.DBStop; d != nil {
		s += fmt.Sprintf(", Postgres stopped %s in for %s (%d keyed orders/s beside)", d.After.D(), d.For.D(), d.Ledger)
	}
	return s
}
