package board

import (
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/units"
)

// The row "PgBouncer" is the pooler's own view, from pgbouncer_exporter
// (Prometheus job "pgbouncer"), which runs only with PgBouncer (compose's
// pgbouncer profile, Kubernetes' pooled overlay); the row is empty
// otherwise. PgBouncer serves the three services together, so its series
// carry no model: poolerMatcher selects the exporter's job, and every
// database but the admin console's own ("pgbouncer").
const poolerMatcher = `job="pgbouncer", database!="pgbouncer"`

// poolerSel is metric{job="pgbouncer", database!="pgbouncer", matchers...}.
func poolerSel(metric string, matchers ...string) string {
	return metric + "{" + strings.Join(append([]string{poolerMatcher}, matchers...), ", ") + "}"
}

// pgbouncerPanels are the row "PgBouncer".
func pgbouncerPanels() []cog.Builder[dashboard.Panel] {
	return []cog.Builder[dashboard.Panel]{
		series("PgBouncer clients: waiting vs served", units.Short, 8,
			"Client connections of every service at PgBouncer, by database (SHOW POOLS): waiting for a server connection (cl_waiting) against linked to one (cl_active, dashed). Behind PgBouncer the services' pools get their connections at once, and their transactions wait here instead, for one of PgBouncer's server connections: this is where the queue moves (docs/scenarios/too-many-clients.md).",
			query(sumBy("database", poolerSel("pgbouncer_pools_client_waiting_connections")), "{{database}} waiting"),
			query(sumBy("database", poolerSel("pgbouncer_pools_client_active_connections")), "{{database}} served"),
		).Min(0).OverrideByRegexp(".* served", dashed()),

		series("PgBouncer server connections: active and idle", units.Short, 8,
			"PgBouncer's connections to Postgres, by database (SHOW POOLS): active (lent to a client for its transaction, sv_active) and idle (ready in the pool, sv_idle), against the pool's size (default_pool_size, dashed red). Active at the pool size with clients waiting is a pool too small for the load; idle ones while clients wait would be a pooler bug.",
			query(sumBy("database", poolerSel("pgbouncer_pools_server_active_connections")), "{{database}} active"),
			query(sumBy("database", poolerSel("pgbouncer_pools_server_idle_connections")), "{{database}} idle"),
			query(maxBy("database", poolerSel("pgbouncer_databases_pool_size")), "{{database}} pool size"),
		).Min(0).OverrideByRegexp(".* pool size", append(dashed(), fixedColor("red")...)),

		series("PgBouncer wait per server assignment", units.Seconds, 8,
			"Mean time a client waited for a server connection, per server connection PgBouncer assigned (SHOW STATS_TOTALS: the rate of wait_time over the rate of server_assignment_count), by database. Finer than SHOW POOLS' maxwait, which has one-second resolution. server_assignment_count exists from PgBouncer 1.23: against an older PgBouncer (the offline lab's stand-in is 1.18) this panel stays empty.",
			query(sumBy("database", rate(poolerSel("pgbouncer_stats_totals_client_wait_seconds_total")))+
				" / "+sumBy("database", rate(poolerSel("pgbouncer_stats_totals_server_assignments_total"))), "{{database}}"),
		).Min(0),
	}
}
