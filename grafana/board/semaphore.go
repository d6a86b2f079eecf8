package board

import (
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/units"
)

// semaphorePanels are the row "Semaphore (semaphore service)".
func semaphorePanels() []cog.Builder[dashboard.Panel] {
	return []cog.Builder[dashboard.Panel]{
		series("Permits", units.Short, 8,
			"LIMIT permits (dashed), permits held now, and requests waiting for a permit. Waiters are bounded in time by LIMIT_WAIT: they get a permit or a 429.",
			query(sumBy("job", sel("orderlab_limiter_permits")), "{{job}} permits"),
			query(sumBy("job", sel("orderlab_limiter_permits_in_use")), "{{job}} in use"),
			query(sumBy("job", sel("orderlab_limiter_waiters")), "{{job}} waiters"),
		).OverrideByRegexp(".* permits", dashed()).Min(0),

		series("Permit wait p99 by outcome", units.Seconds, 8,
			"Time waited for a permit (orderlab_limiter_wait_seconds). acquired: got one; rejected: gave up after LIMIT_WAIT and answered 429; canceled: the client went away.",
			quantile("0.99", "orderlab_limiter_wait_seconds", "job, outcome", "{{job}} {{outcome}}"),
		),

		series("Limiter rejections", units.RequestsPerSecond, 8,
			"Requests answered 429 because no permit came within LIMIT_WAIT (orderlab_limiter_rejections_total). Fast failure instead of a queue in front of the pool.",
			query(sumBy("job", rate(sel("orderlab_limiter_rejections_total"))), "{{job}}"),
		),
	}
}
