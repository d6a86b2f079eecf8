package board

import (
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/units"
)

// trafficPanels are the row "Traffic and errors".
func trafficPanels() []cog.Builder[dashboard.Panel] {
	return []cog.Builder[dashboard.Panel]{
		series("Throughput", units.RequestsPerSecond, 9,
			"Requests answered per second (any status, health checks excluded), and orders committed per second (dashed). The gap between them is rejections and failures. Dotted: the lab's background load, as counted by the background itself (orderlab_background_requests_total, a few requests per second, off with BACKGROUND_RATE=0): everything above it is your load.",
			query(sumBy("job", rate(sel("orderlab_http_request_duration_seconds_count", apiRoutes))), "{{job}} requests/s"),
			query(sumBy("job", rate(sel("orderlab_orders_created_total"))), "{{job}} orders/s"),
			query(sumBy("job", rate(sel("orderlab_background_requests_total"))), "{{job}} background requests/s"),
		).OverrideByRegexp(".* orders/s", dashed()).OverrideByRegexp(".* background requests/s", dotted()),

		series("Responses by status (errors and rejections)", units.RequestsPerSecond, 9,
			"429: admission control said no (semaphore: no permit within LIMIT_WAIT; pipeline: intake queue full, or with AUDIT_DELAY no audit slot free; the rejection counters say which by reason). 5xx: the request failed, typically its deadline (REQUEST_TIMEOUT) expired while it waited for a pool connection.",
			query(sumBy("job, code", rate(sel("orderlab_http_request_duration_seconds_count", apiRoutes))), "{{job}} {{code}}"),
		).
			OverrideByRegexp(".* 429", fixedColor("orange")).
			OverrideByRegexp(`.* 5\d\d`, fixedColor("red")),

		series("Requests in flight", units.Short, 6,
			"Requests being served now. With unbounded concurrency this climbs with the offered load; a semaphore or a bounded queue caps it.",
			query(sumBy("job", sel("orderlab_http_requests_in_flight")), "{{job}}"),
		),
		series("Answers per second by outcome vs commits per second", units.RequestsPerSecond, 12,
			"Answers by outcome (2xx; rejected: 429; 4xx: other client errors; 5xx) against orders committed per second (dashed). In a retry storm the rejected line towers over the commits while goodput, the commits, stays flat or falls; clients that honour Retry-After bring it down.",
			query(sumBy("job, outcome", `label_replace(label_replace(`+rate(sel("orderlab_http_request_duration_seconds_count", apiRoutes))+
				`, "outcome", "${1}xx", "code", "(.).."), "outcome", "rejected", "code", "429")`), "{{job}} {{outcome}}"),
			query(sumBy("job", rate(sel("orderlab_orders_created_total"))), "{{job}} commits/s"),
		).
			OverrideByRegexp(".* commits/s", dashed()).
			OverrideByRegexp(".* rejected", fixedColor("orange")).
			OverrideByRegexp(".* 5xx", fixedColor("red")),

		series("Server CPU per answer", units.Microseconds, 12,
			"Server CPU per answer (µs, process_cpu_seconds_total over answers of every status) and, right axis, cores used. Where nearly every answer is a 429, as in a retry storm, this is what a rejection costs; make bench-admission measures it apart (a 429 against a trivial GET /livez).",
			query("1e6 * "+sumBy("job", rate(sel("process_cpu_seconds_total")))+" / "+sumBy("job", rate(sel("orderlab_http_request_duration_seconds_count", apiRoutes))), "{{job}} µs/answer"),
			query(sumBy("job", rate(sel("process_cpu_seconds_total"))), "{{job}} cores"),
		).OverrideByRegexp(".* cores", rightAxis(units.Short)),
	}
}
