package board

import (
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/units"
)

// The row "Postgres server" is the database's own view, from
// postgres_exporter (Prometheus job "postgres"). Its series carry no model
// in job: each service connects with application_name orderlab-<model>, so
// appMatcher narrows them to the services picked in $service, and
// serverMatcher marks the few server-wide ones (max_connections, every
// backend) that no application owns.
const (
	appMatcher    = `application_name=~"orderlab-$service"`
	serverMatcher = `job="postgres"`
)

// pgSel is the series selector metric{application_name=~"orderlab-$service",
// matchers...}: the server's series of the picked services' connections.
func pgSel(metric string, matchers ...string) string {
	return metric + "{" + strings.Join(append([]string{serverMatcher, appMatcher}, matchers...), ", ") + "}"
}

// serverSel is metric{job="postgres", matchers...}: a server-wide series.
func serverSel(metric string, matchers ...string) string {
	return metric + "{" + strings.Join(append([]string{serverMatcher}, matchers...), ", ") + "}"
}

// postgresPanels are the row "Postgres server".
func postgresPanels() []cog.Builder[dashboard.Panel] {
	return []cog.Builder[dashboard.Panel]{
		series("Server backends by model vs max_connections", units.Short, 12,
			"What Postgres sees (pg_stat_activity, through postgres_exporter): the backends each service holds open, by application_name (orderlab-<model>), against max_connections (dashed red) and every backend of the server (dashed). Each pool holds up to DB_MAX_CONNS; the three together, plus anything else connected, must stay under max_connections less the 3 slots kept for superusers, or new connections are refused with \"too many clients\" (alert PostgresNearMaxConnections). Behind PgBouncer, the backends are PgBouncer's, not the services'.",
			query(sumBy("application_name", pgSel("pg_stat_activity_count")), "{{application_name}}"),
			query(sum(serverSel("pg_stat_activity_count")), "all backends"),
			query("max("+serverSel("pg_settings_max_connections")+")", "max_connections"),
		).Min(0).
			OverrideByName("max_connections", append(dashed(), fixedColor("red")...)).
			OverrideByName("all backends", dashed()),

		series("Server backends by state", units.Short, 12,
			"The same backends by state: active (running a statement), idle (an idle pool connection), idle in transaction (a transaction is open and the client is doing something else: a connection leak inside a transaction, or a transaction held across a downstream call). Postgres cannot tell a pool's idle connection from a leaked one; the pool's own Longest-held connection panel can.",
			query(sumBy("application_name, state", pgSel("pg_stat_activity_count")), "{{application_name}} {{state}}"),
		).Min(0),

		series("Longest open transaction", units.Seconds, 8,
			"Age of the oldest open transaction per model, among its backends running a statement or idle in transaction (pg_stat_activity_max_tx_duration; 0 while none is open). A healthy order's transaction lasts milliseconds; one that stays open while its backend is idle in transaction holds its row locks and its pool connection, and keeps vacuum from cleaning up behind it.",
			query(maxBy("application_name", pgSel("pg_stat_activity_max_tx_duration", `state=~"active|idle in transaction.*"`))+
				" or "+maxBy("application_name", pgSel("pg_stat_activity_count"))+" * 0", "{{application_name}}"),
		).Min(0),

		series("Backends waiting on locks", units.Short, 8,
			"Backends whose wait_event_type is Lock: a statement queued behind another transaction's row or table lock. Zero in this lab's order path, which takes no lock another order waits on; a transaction held open across a slow call makes it rise.",
			query(sumBy("application_name", pgSel("pg_stat_activity_count", `wait_event_type="Lock"`))+
				" or "+sumBy("application_name", pgSel("pg_stat_activity_count"))+" * 0", "{{application_name}}"),
		).Min(0),

		series("Transactions committed vs orders committed", units.OpsPerSecond, 8,
			"Postgres' commits per second (pg_stat_database_xact_commit) in the databases the picked services are connected to, beside the orders the services committed per second (dashed). The gap is the reads, the exporter's own queries and, for the pipeline, the batches: one commit carries many orders.",
			query(sumBy("datname", rate(serverSel("pg_stat_database_xact_commit")))+
				" and on (datname) ("+sumBy("datname", pgSel("pg_stat_activity_count"))+" > 0)", "{{datname}}: Postgres commits/s"),
			query(sumBy("job", rate(sel("orderlab_orders_created_total"))), "{{job}} orders/s"),
		).Min(0).OverrideByRegexp(".* orders/s", dashed()),
	}
}
