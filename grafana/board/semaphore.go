package board

import (
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/units"
)

// semaphorePanels are the row "Semaphore (semaphore service)".
func semaphorePanels() []cog.Builder[dashboard.Panel] {
	return []cog.Builder[dashboard.Panel]{
		series("Limit vs in flight vs pool size", units.Short, 8,
			"The limiter's current limit (dashed: LIMIT when fixed, the adaptive limit's value with LIMIT=adaptive, orderlab_limiter_limit), permits held now (in flight), requests queued for a permit, and the pool size (dotted). A fixed limit far above the pool starves the pool like unbounded; an adaptive limit should settle near the pool size. Queued requests wait at most LIMIT_WAIT. Right axis, with LIMIT=adaptive: what the limit decides on each 100 ms (orderlab_limiter_signal), the share of pool acquires that waited (it backs off above 0.02) and the mean permit hold over its baseline (it backs off above 1.5).",
			query(sumBy("job", sel("orderlab_limiter_limit")), "{{job}} limit"),
			query(sumBy("job", sel("orderlab_limiter_permits_in_use")), "{{job}} in flight"),
			query(sumBy("job", sel("orderlab_limiter_waiters")), "{{job}} queued"),
			query(sumBy("job", sel("orderlab_db_pool_max_connections"))+" and on (job) "+sel("orderlab_limiter_limit"), "{{job}} pool size"),
			query(sumBy("job, signal", sel("orderlab_limiter_signal")), "{{job}} signal {{signal}}"),
		).OverrideByRegexp(".* limit", dashed()).OverrideByRegexp(".* pool size", dotted()).
			OverrideByRegexp(".* signal .*", rightAxis(units.Short)).Min(0),

		series("Permit wait p99 by outcome", units.Seconds, 8,
			"Time waited for a permit (orderlab_limiter_wait_seconds). acquired: got one; rejected: gave up after LIMIT_WAIT and answered 429; canceled: the client went away.",
			quantile("0.99", "orderlab_limiter_wait_seconds", "job, outcome", "{{job}} {{outcome}}"),
		),

		series("Limiter rejections", units.RequestsPerSecond, 8,
			"Requests answered 429 by the limiter, by reason (orderlab_limiter_rejections_total): wait_timeout, no permit within LIMIT_WAIT; at_limit, every permit held and LIMIT_WAIT=0; queue_full, the adaptive limit's queue over its bound. The permit is taken before the body is read, so a rejection costs no decoding.",
			query(sumBy("job, reason", rate(sel("orderlab_limiter_rejections_total"))), "{{job}} {{reason}}"),
		),
	}
}
