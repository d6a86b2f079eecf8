package board

import (
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/units"
)

// latencyPanels are the row "Tail latency (exemplars link to traces)".
func latencyPanels() []cog.Builder[dashboard.Panel] {
	latency := repeatPerService(series("Latency: $service", units.Seconds, 24,
		"Quantiles from the native histogram orderlab_http_request_duration_seconds (all API routes and statuses). Exemplar dots on p99 carry trace_id: click one to open the trace and see where the time went (pool.acquire, limiter.wait, pipeline.enqueue).",
		quantile("0.5", "orderlab_http_request_duration_seconds", "", "p50", apiRoutes),
		quantile("0.99", "orderlab_http_request_duration_seconds", "", "p99", apiRoutes).Exemplar(true),
		quantile("0.999", "orderlab_http_request_duration_seconds", "", "p99.9", apiRoutes),
	)).
		Height(9)

	return []cog.Builder[dashboard.Panel]{
		latency,
		series("p99 latency by service", units.Seconds, 12,
			"The three models on one axis. A low p99 with many 429s is rejection, not speed: read it next to the status panel.",
			quantile("0.99", "orderlab_http_request_duration_seconds", "job", "{{job}}", apiRoutes).Exemplar(true),
		),
		series("p99 latency by route", units.Seconds, 12,
			"Per route template, so a slow /orders is not hidden by fast reads.",
			quantile("0.99", "orderlab_http_request_duration_seconds", "job, route", "{{job}} {{route}}", apiRoutes),
		),
	}
}
