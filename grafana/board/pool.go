package board

import (
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/units"
)

// poolPanels are the row "Postgres pool".
func poolPanels() []cog.Builder[dashboard.Panel] {
	connections := repeatPerService(series("Pool connections: $service", units.Short, 24,
		"Checked-out (acquired) connections against the pool's maximum (DB_MAX_CONNS, dashed). A starving pool sits at its maximum with zero idle connections.",
		query(sum(sel("orderlab_db_pool_acquired_connections")), "acquired"),
		query(sum(sel("orderlab_db_pool_idle_connections")), "idle"),
		query(sum(sel("orderlab_db_pool_constructing_connections")), "constructing"),
		query(sum(sel("orderlab_db_pool_total_connections")), "total"),
		query(sum(sel("orderlab_db_pool_max_connections")), "max"),
	)).
		Min(0).
		OverrideByName("max", append(dashed(), fixedColor("red")...))

	return []cog.Builder[dashboard.Panel]{
		connections,

		series("Pool acquire wait p99", units.Seconds, 8,
			"p99 of the time each pgxpool acquire waited for a connection (orderlab_db_pool_acquire_wait_seconds, all outcomes). The starvation signal: with unbounded concurrency it grows towards the request deadline; a semaphore keeps it near zero. Exemplars open the request's trace at its pool.acquire span.",
			quantile("0.99", "orderlab_db_pool_acquire_wait_seconds", "job", "{{job}}").Exemplar(true),
		),

		series("Share of acquires that had to wait", units.PercentUnit, 8,
			"Acquires that found no idle connection (empty acquires) over all successful acquires, from the recording rule job:orderlab_db_pool_acquires_waited:ratio_rate1m. Near 100% means every request queues for the pool.",
			query(sel("job:orderlab_db_pool_acquires_waited:ratio_rate1m"), "{{job}}"),
		).Min(0).Max(1),

		series("Waiting acquires", units.Short, 8,
			"Goroutines inside pgxpool.Acquire at each scrape (orderlab_db_pool_acquires_in_progress), and their mean over the interval by Little's law: total seconds waited per second of wall time (L = λW) from the acquire-wait histogram. Dashed, right axis: acquires that gave up at their deadline (canceled) per second.",
			query(sel("orderlab_db_pool_acquires_in_progress"), "{{job}} waiting now"),
			query("histogram_sum("+sumBy("job", rate(sel("orderlab_db_pool_acquire_wait_seconds")))+")", "{{job}} waiting (mean)"),
			query(sumBy("job", rate(sel("orderlab_db_pool_canceled_acquires_total"))), "{{job}} canceled/s"),
		).OverrideByRegexp(".* canceled/s", append(dashed(), rightAxis(units.OpsPerSecond)...)),

		series("Little's law: pool capacity vs throughput", units.OpsPerSecond, 16,
			"Dashed: the most acquires per second the pool can serve, max_connections / mean hold time (recording rule job:orderlab_db_pool_littles_law_bound:rate1m). Solid: actual acquires per second. When the solid line meets the dashed one the pool is the bottleneck, and any extra concurrency only adds queueing (acquire wait), not throughput. Pipeline acquires once per batch, so its orders/s can exceed this line. The dashed line moves with the hold time: a slower query or a slower network to Postgres (docs/scenarios/db-latency.md) lowers it with no change in load, and a queue forms once the solid line reaches it (alert PoolNearItsBound).",
			query(sel("job:orderlab_db_pool_littles_law_bound:rate1m"), "{{job}} bound: max_conns / mean hold"),
			query(sel("job:orderlab_db_pool_acquires:rate1m"), "{{job}} actual acquires/s"),
		).OverrideByRegexp(".* bound: .*", dashed()),

		series("Longest-held connection vs acquires", units.Seconds, 8,
			"Solid: the age of the longest-held acquired connection now (orderlab_db_pool_longest_hold_seconds). A healthy pool's holds end within a request's deadline; a connection that is never released (a forgotten rows.Close or conn.Release: LEAK_EVERY) makes it climb one second per second. Dashed, right axis: successful acquires per second. A climbing hold while acquires fall to zero and acquired connections sit at the maximum is a leak, not load (alert PoolLeakSuspected).",
			query(maxBy("job", sel("orderlab_db_pool_longest_hold_seconds")), "{{job}} longest hold"),
			query(sumBy("job", rate(sel("orderlab_db_pool_acquires_total"))), "{{job}} acquires/s"),
		).Min(0).OverrideByRegexp(".* acquires/s", append(dashed(), rightAxis(units.OpsPerSecond)...)),

		series("Pool utilisation", units.PercentUnit, 8,
			"Acquired over max connections (recording rule job:orderlab_db_pool_utilization:ratio). 100% alone is healthy; 100% together with a long acquire wait is starvation.",
			query(sel("job:orderlab_db_pool_utilization:ratio"), "{{job}}"),
		).Min(0).Max(1),

		series("Mean acquire time", units.Seconds, 12,
			"pgxpool's own counters: mean time of all successful acquires, and mean wait of the acquires that found the pool empty (dashed).",
			query(meanByJob("orderlab_db_pool_acquire_duration_seconds_total", "orderlab_db_pool_acquires_total"), "{{job}} all acquires"),
			query(meanByJob("orderlab_db_pool_empty_acquire_wait_seconds_total", "orderlab_db_pool_empty_acquires_total"), "{{job}} acquires that waited"),
		).OverrideByRegexp(".* acquires that waited", dashed()),

		series("Connection hold time", units.Seconds, 12,
			"Time from acquire to release: what each transaction costs the pool. The mean (dashed) is the W of the Little's-law panel. Dotted: one round trip to the database (orderlab_db_round_trip_seconds, an empty query timed at each scrape outside the pool). A hold that grows with the round trip is a slow network to Postgres (alert PitfallDbLatency); a hold that grows while the round trip stays small is time spent elsewhere: in Postgres, in the service's own code, or waiting for a core.",
			quantile("0.5", "orderlab_db_pool_connection_hold_seconds", "job", "{{job}} p50"),
			quantile("0.99", "orderlab_db_pool_connection_hold_seconds", "job", "{{job}} p99"),
			query(sel("job:orderlab_db_pool_connection_hold_seconds:mean1m"), "{{job}} mean"),
			query(maxBy("job", sel("orderlab_db_round_trip_seconds")), "{{job}} round trip"),
		).OverrideByRegexp(".* mean", dashed()).
			OverrideByRegexp(".* round trip", dotted()),

		series("Database errors by class, and retries", units.OpsPerSecond, 24,
			"Failed database calls per second (orderlab_db_errors_total, each attempt) by class: unavailable (no connection could be had: refused, timed out, the server starting or stopping), connection_lost (the connection broke before anything was committed), outcome_unknown (it broke after the transaction was sent), deadline, conflict, refused (the server refused the transaction for another reason than a constraint: a deadlock, a statement error), other (a bug). Dashed: calls sent a second time (orderlab_db_retries_total) by reason: connection_lost on a new connection, outcome_unknown for keyed orders through the replay path and for reads. A connection_lost error followed by its retry is invisible to clients; unavailable errors, and outcome_unknown ones that could not be retried, are what they see as 503s (alert DatabaseUnavailable).",
			query(sumBy("job, class", rate(sel("orderlab_db_errors_total"))), "{{job}} {{class}}"),
			query(sumBy("job, reason", rate(sel("orderlab_db_retries_total"))), "{{job}} retried: {{reason}}"),
		).Min(0).OverrideByRegexp(".* retried: .*", dashed()),
	}
}
