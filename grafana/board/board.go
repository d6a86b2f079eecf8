// Package board defines the lab's Grafana dashboard as code, with
// grafana-foundation-sdk. `go run ./grafana/generate` writes it to
// grafana/dashboards/, which Grafana provisions; a test keeps the committed
// JSON equal to what this package builds.
//
// Every query selects on job=~"$service": one Prometheus job per concurrency
// model (prometheus/prometheus.yml), so the three services sit side by side
// as one line each, or as one repeated panel each.
package board

// The v1 dashboard schema is what Grafana 12 provisions from files without
// feature toggles; the SDK already marks it deprecated in favour of the v2
// (dynamic dashboards) schema, which still needs them.
//
//lint:file-ignore SA1019 v1 dashboard JSON is the stable file-provisioning format of the pinned Grafana 12

import (
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/variants"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
	"github.com/grafana/grafana-foundation-sdk/go/units"
)

// Datasource UIDs, as provisioned in grafana/provisioning/datasources.
const (
	PrometheusUID = "prometheus"
	JaegerUID     = "jaeger"
)

// PoolStarvationUID is the UID of the main board; the alerts link to
// /d/<uid>.
const PoolStarvationUID = "orderlab-pool-starvation"

// PoolStarvationTitle is the title of the main board.
const PoolStarvationTitle = "Orders: pool starvation and tail latency"

// LoadRunTag is the Grafana annotation tag that marks load runs: loadtest
// posts the start and end of each run with it when GRAFANA_URL is set.
const LoadRunTag = "loadtest"

// apiRoutes excludes the health checks from request and latency panels: the
// compose healthchecks hit them every few seconds and they would dilute the
// quantiles.
const apiRoutes = `route!~"/livez|/readyz"`

// PoolStarvation builds the main board.
func PoolStarvation() (dashboard.Dashboard, error) {
	b := dashboard.NewDashboardBuilder(PoolStarvationTitle).
		Uid(PoolStarvationUID).
		Description("Three concurrency models in front of the same Postgres pool: unbounded goroutines, a semaphore before the pool, and a pipeline with bounded queues. Under overload, watch acquire wait, waiting acquires and the tail; exemplars on latency panels open the trace in Jaeger.").
		Tags([]string{"orderlab", "postgres", "pool", "latency"}).
		Editable().
		Time("now-15m", "now").
		Refresh("5s").
		Timezone(common.TimeZoneBrowser).
		Tooltip(dashboard.DashboardCursorSyncCrosshair).
		Link(dashboard.NewDashboardLinkBuilder("Traces (Jaeger)").
			Type(dashboard.DashboardLinkTypeLink).
			Url("http://127.0.0.1:16686/search").
			Icon("external link").
			TargetBlank(true)).
		Link(dashboard.NewDashboardLinkBuilder("Prometheus alerts").
			Type(dashboard.DashboardLinkTypeLink).
			Url("http://127.0.0.1:9090/alerts").
			Icon("external link").
			TargetBlank(true)).
		WithVariable(serviceVariable()).
		Annotation(builtInAnnotations()).
		Annotation(loadRunAnnotations()).
		Annotation(alertAnnotations())

	b = b.WithRow(dashboard.NewRowBuilder("Overview (last minute)")).
		WithPanel(scoreboard())
	for _, row := range []struct {
		title  string
		panels []cog.Builder[dashboard.Panel]
	}{
		{"Traffic and errors", trafficPanels()},
		{"Tail latency (exemplars link to traces)", latencyPanels()},
		{"Postgres pool", poolPanels()},
		{"Semaphore (semaphore service)", semaphorePanels()},
		{"Pipeline (pipeline service)", pipelinePanels()},
		{"Go runtime and process", runtimePanels()},
	} {
		b = b.WithRow(dashboard.NewRowBuilder(row.title))
		for _, p := range row.panels {
			b = b.WithPanel(p)
		}
	}
	d, err := b.Build()
	if err != nil {
		return d, err
	}
	layout(&d)
	return d, nil
}

// layout numbers the panels and places them left to right, starting a new
// line when a panel would not fit (the SDK only wraps after overflowing).
func layout(d *dashboard.Dashboard) {
	var x, y, lineHeight uint32
	for i := range d.Panels {
		id := uint32(i + 1)
		if r := d.Panels[i].RowPanel; r != nil {
			y += lineHeight
			r.Id = id
			r.GridPos = &dashboard.GridPos{X: 0, Y: y, W: 24, H: 1}
			x, y, lineHeight = 0, y+1, 0
			continue
		}
		p := d.Panels[i].Panel
		p.Id = &id
		w, h := p.GridPos.W, p.GridPos.H
		if x+w > 24 {
			x, y, lineHeight = 0, y+lineHeight, 0
		}
		p.GridPos = &dashboard.GridPos{X: x, Y: y, W: w, H: h}
		x += w
		lineHeight = max(lineHeight, h)
	}
}

func serviceVariable() *dashboard.QueryVariableBuilder {
	query := "label_values(orderlab_service_info, job)"
	return dashboard.NewQueryVariableBuilder("service").
		Label("Service").
		Description("Prometheus job, one per concurrency model").
		Datasource(promDS()).
		Query(dashboard.StringOrMap{String: &query}).
		Definition(query).
		Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
		Sort(dashboard.VariableSortAlphabeticalAsc).
		Multi(true).
		IncludeAll(true).
		Current(dashboard.VariableOption{
			Text:  dashboard.StringOrArrayOfString{ArrayOfString: []string{"All"}},
			Value: dashboard.StringOrArrayOfString{ArrayOfString: []string{"$__all"}},
		})
}

func builtInAnnotations() *dashboard.AnnotationQueryBuilder {
	return dashboard.NewAnnotationQueryBuilder().
		Name("Annotations & Alerts").
		Datasource(grafanaDS()).
		BuiltIn(1).
		Enable(true).
		Hide(true).
		IconColor("rgba(0, 211, 255, 1)").
		Type("dashboard")
}

// loadRunAnnotations shows the runs loadtest posts to Grafana's annotation
// API (organisation-wide annotations tagged "loadtest").
func loadRunAnnotations() *dashboard.AnnotationQueryBuilder {
	return dashboard.NewAnnotationQueryBuilder().
		Name("Load runs").
		Datasource(grafanaDS()).
		Enable(true).
		IconColor("purple").
		Target(rawQuery{
			"type":     "tags",
			"tags":     []string{LoadRunTag},
			"matchAny": true,
			"limit":    100,
		})
}

func alertAnnotations() *dashboard.AnnotationQueryBuilder {
	return dashboard.NewAnnotationQueryBuilder().
		Name("Firing alerts").
		Datasource(promDS()).
		Enable(true).
		IconColor("red").
		Expr(`ALERTS{alertstate="firing", job=~"$service"}`).
		Step("15s").
		TitleFormat("{{alertname}}").
		TextFormat("{{job}}: {{alertname}} ({{severity}})").
		TagKeys("alertname,job,severity")
}

func trafficPanels() []cog.Builder[dashboard.Panel] {
	return []cog.Builder[dashboard.Panel]{
		series("Throughput", units.RequestsPerSecond, 9,
			"Requests answered per second (any status, health checks excluded), and orders committed per second. The gap between them is rejections and failures.",
			query(`sum by (job) (rate(orderlab_http_request_duration_seconds_count{job=~"$service", `+apiRoutes+`}[$__rate_interval]))`, "{{job}} requests/s"),
			query(`sum by (job) (rate(orderlab_orders_created_total{job=~"$service"}[$__rate_interval]))`, "{{job}} orders/s"),
		).OverrideByRegexp(".* orders/s", dashed()),

		series("Responses by status (errors and rejections)", units.RequestsPerSecond, 9,
			"429: admission control said no (semaphore: no permit within LIMIT_WAIT; pipeline: intake queue full). 5xx: the request failed, typically its deadline (REQUEST_TIMEOUT) expired while it waited for a pool connection.",
			query(`sum by (job, code) (rate(orderlab_http_request_duration_seconds_count{job=~"$service", `+apiRoutes+`}[$__rate_interval]))`, "{{job}} {{code}}"),
		).
			OverrideByRegexp(".* 429", fixedColor("orange")).
			OverrideByRegexp(`.* 5\d\d`, fixedColor("red")),

		series("Requests in flight", units.Short, 6,
			"Requests being served now. With unbounded concurrency this climbs with the offered load; a semaphore or a bounded queue caps it.",
			query(`sum by (job) (orderlab_http_requests_in_flight{job=~"$service"})`, "{{job}}"),
		),
	}
}

// scoreboardColumns are the scoreboard's columns: the recording rules of
// prometheus/rules/recording.yml, one row per service. SEL stands for the
// $service selector.
var scoreboardColumns = []struct {
	title, expr, unit string
	thresholds        []float64 // orange and red from these values on
}{
	{"req/s", "job:orderlab_http_requests:rate1mSEL", units.RequestsPerSecond, nil},
	{"p50", "job:orderlab_http_request_duration_seconds:p50_1mSEL", units.Seconds, nil},
	{"p99", "job:orderlab_http_request_duration_seconds:p99_1mSEL", units.Seconds, []float64{0.25, 0.5}},
	{"p99.9", "job:orderlab_http_request_duration_seconds:p999_1mSEL", units.Seconds, nil},
	// unbounded never rejects: 0, not a blank cell.
	{"rejected (429)", "job:orderlab_rejections:ratio_rate1mSEL or 0 * job:orderlab_http_requests:rate1mSEL", units.PercentUnit, []float64{0.01, 0.05}},
	{"acquire wait p99", "job:orderlab_db_pool_acquire_wait_seconds:p99_1mSEL", units.Seconds, []float64{0.01, 0.1}},
	{"acquires that waited", "job:orderlab_db_pool_acquires_waited:ratio_rate1mSEL", units.PercentUnit, []float64{0.2, 0.5}},
	{"canceled acquires/s", "job:orderlab_db_pool_acquires_canceled:rate1mSEL", units.OpsPerSecond, []float64{0.001, 1}},
	{"pool utilisation", "job:orderlab_db_pool_utilization:ratioSEL", units.PercentUnit, nil},
	{"acquires/s", "job:orderlab_db_pool_acquires:rate1mSEL", units.OpsPerSecond, nil},
	{"pool bound (Little)", "job:orderlab_db_pool_littles_law_bound:rate1mSEL", units.OpsPerSecond, nil},
}

// scoreboard is the three models in one table, from the recording rules:
// cheap to refresh, and the numbers the alerts look at.
func scoreboard() *table.PanelBuilder {
	p := table.NewPanelBuilder().
		Title("Scoreboard").
		Description("One row per service, over the last minute, from the recording rules (the inputs of the alerts). Orange and red cells: acquire wait and waiting acquires mean pool starvation (PoolStarvation), a long p99 is TailLatencyHigh, many 429s RejectionsHigh. 'pool bound' is Little's law: max connections / mean hold time, the most acquires per second the pool can serve.").
		Datasource(promDS()).
		Span(24).Height(6).
		Footer(common.NewTableFooterOptionsBuilder().Show(false).Reducer([]string{})).
		WithTransformation(dashboard.DataTransformerConfig{Id: "merge", Options: map[string]any{}})
	rename := map[string]any{}
	index := map[string]any{"job": 0, "model": 1}
	for i, c := range scoreboardColumns {
		ref := string(rune('A' + i))
		// Joined with orderlab_service_info: every row also names its model.
		expr := "(" + strings.ReplaceAll(c.expr, "SEL", `{job=~"$service"}`) + `) * on (job) group_left (model) max by (job, model) (orderlab_service_info{job=~"$service"})`
		p = p.WithTarget(query(expr, "").Instant().Format(prometheus.PromQueryFormatTable).RefId(ref))
		rename["Value #"+ref] = c.title
		index["Value #"+ref] = i + 2 // organize orders by the original names
		props := []dashboard.DynamicConfigValue{{Id: "unit", Value: c.unit}}
		if c.thresholds != nil {
			props = append(props,
				dashboard.DynamicConfigValue{Id: "thresholds", Value: map[string]any{
					"mode": "absolute",
					"steps": []map[string]any{
						{"color": "green", "value": nil},
						{"color": "orange", "value": c.thresholds[0]},
						{"color": "red", "value": c.thresholds[1]},
					},
				}},
				dashboard.DynamicConfigValue{Id: "custom.cellOptions", Value: map[string]any{"type": "color-text"}},
			)
		}
		p = p.OverrideByName(c.title, props)
	}
	return p.WithTransformation(dashboard.DataTransformerConfig{
		Id: "organize",
		Options: map[string]any{
			"excludeByName": map[string]any{"Time": true},
			"renameByName":  rename,
			"indexByName":   index,
		},
	})
}

func latencyPanels() []cog.Builder[dashboard.Panel] {
	latency := repeatPerService(series("Latency: $service", units.Seconds, 24,
		"Quantiles from the native histogram orderlab_http_request_duration_seconds (all API routes and statuses). Exemplar dots on p99 carry trace_id: click one to open the trace and see where the time went (pool.acquire, limiter.wait, pipeline.enqueue).",
		quantile("0.5", "orderlab_http_request_duration_seconds", "", apiRoutes, "p50"),
		quantile("0.99", "orderlab_http_request_duration_seconds", "", apiRoutes, "p99").Exemplar(true),
		quantile("0.999", "orderlab_http_request_duration_seconds", "", apiRoutes, "p99.9"),
	)).
		Height(9)

	return []cog.Builder[dashboard.Panel]{
		latency,
		series("p99 latency by service", units.Seconds, 12,
			"The three models on one axis. A low p99 with many 429s is rejection, not speed: read it next to the status panel.",
			quantile("0.99", "orderlab_http_request_duration_seconds", "job", apiRoutes, "{{job}}").Exemplar(true),
		),
		series("p99 latency by route", units.Seconds, 12,
			"Per route template, so a slow /orders is not hidden by fast reads.",
			quantile("0.99", "orderlab_http_request_duration_seconds", "job, route", apiRoutes, "{{job}} {{route}}"),
		),
	}
}

func poolPanels() []cog.Builder[dashboard.Panel] {
	connections := repeatPerService(series("Pool connections: $service", units.Short, 24,
		"Checked-out (acquired) connections against the pool's maximum (DB_MAX_CONNS, dashed). A starving pool sits at its maximum with zero idle connections.",
		query(`sum(orderlab_db_pool_acquired_connections{job=~"$service"})`, "acquired"),
		query(`sum(orderlab_db_pool_idle_connections{job=~"$service"})`, "idle"),
		query(`sum(orderlab_db_pool_constructing_connections{job=~"$service"})`, "constructing"),
		query(`sum(orderlab_db_pool_total_connections{job=~"$service"})`, "total"),
		query(`sum(orderlab_db_pool_max_connections{job=~"$service"})`, "max"),
	)).
		Min(0).
		OverrideByName("max", append(dashed(), fixedColor("red")...))

	return []cog.Builder[dashboard.Panel]{
		connections,

		series("Pool acquire wait p99", units.Seconds, 8,
			"p99 of the time each pgxpool acquire waited for a connection (orderlab_db_pool_acquire_wait_seconds, all outcomes). The starvation signal: with unbounded concurrency it grows towards the request deadline; a semaphore keeps it near zero. Exemplars open the request's trace at its pool.acquire span.",
			quantile("0.99", "orderlab_db_pool_acquire_wait_seconds", "job", "", "{{job}}").Exemplar(true),
		),

		series("Share of acquires that had to wait", units.PercentUnit, 8,
			"Acquires that found no idle connection (empty acquires) over all successful acquires, from the recording rule job:orderlab_db_pool_acquires_waited:ratio_rate1m. Near 100% means every request queues for the pool.",
			query(`job:orderlab_db_pool_acquires_waited:ratio_rate1m{job=~"$service"}`, "{{job}}"),
		).Min(0).Max(1),

		series("Waiting acquires", units.Short, 8,
			"Goroutines inside pgxpool.Acquire at each scrape (orderlab_db_pool_acquires_in_progress), and their mean over the interval by Little's law: total seconds waited per second of wall time (L = λW) from the acquire-wait histogram. Dashed, right axis: acquires that gave up at their deadline (canceled) per second.",
			query(`orderlab_db_pool_acquires_in_progress{job=~"$service"}`, "{{job}} waiting now"),
			query(`histogram_sum(sum by (job) (rate(orderlab_db_pool_acquire_wait_seconds{job=~"$service"}[$__rate_interval])))`, "{{job}} waiting (mean)"),
			query(`sum by (job) (rate(orderlab_db_pool_canceled_acquires_total{job=~"$service"}[$__rate_interval]))`, "{{job}} canceled/s"),
		).OverrideByRegexp(".* canceled/s", append(dashed(), rightAxis(units.OpsPerSecond)...)),

		series("Little's law: pool capacity vs throughput", units.OpsPerSecond, 16,
			"Dashed: the most acquires per second the pool can serve, max_connections / mean hold time (recording rule job:orderlab_db_pool_littles_law_bound:rate1m). Solid: actual acquires per second. When the solid line meets the dashed one the pool is the bottleneck, and any extra concurrency only adds queueing (acquire wait), not throughput. Pipeline acquires once per batch, so its orders/s can exceed this line.",
			query(`job:orderlab_db_pool_littles_law_bound:rate1m{job=~"$service"}`, "{{job}} bound: max_conns / mean hold"),
			query(`job:orderlab_db_pool_acquires:rate1m{job=~"$service"}`, "{{job}} actual acquires/s"),
		).OverrideByRegexp(".* bound: .*", dashed()),

		series("Pool utilisation", units.PercentUnit, 8,
			"Acquired over max connections (recording rule job:orderlab_db_pool_utilization:ratio). 100% alone is healthy; 100% together with a long acquire wait is starvation.",
			query(`job:orderlab_db_pool_utilization:ratio{job=~"$service"}`, "{{job}}"),
		).Min(0).Max(1),

		series("Mean acquire time", units.Seconds, 12,
			"pgxpool's own counters: mean time of all successful acquires, and mean wait of the acquires that found the pool empty (dashed).",
			query(`sum by (job) (rate(orderlab_db_pool_acquire_duration_seconds_total{job=~"$service"}[$__rate_interval])) / sum by (job) (rate(orderlab_db_pool_acquires_total{job=~"$service"}[$__rate_interval]))`, "{{job}} all acquires"),
			query(`sum by (job) (rate(orderlab_db_pool_empty_acquire_wait_seconds_total{job=~"$service"}[$__rate_interval])) / sum by (job) (rate(orderlab_db_pool_empty_acquires_total{job=~"$service"}[$__rate_interval]))`, "{{job}} acquires that waited"),
		).OverrideByRegexp(".* acquires that waited", dashed()),

		series("Connection hold time", units.Seconds, 12,
			"Time from acquire to release: what each transaction costs the pool. The mean (dashed) is the W of the Little's-law panel.",
			quantile("0.5", "orderlab_db_pool_connection_hold_seconds", "job", "", "{{job}} p50"),
			quantile("0.99", "orderlab_db_pool_connection_hold_seconds", "job", "", "{{job}} p99"),
			query(`job:orderlab_db_pool_connection_hold_seconds:mean1m{job=~"$service"}`, "{{job}} mean"),
		).OverrideByRegexp(".* mean", dashed()),
	}
}

func semaphorePanels() []cog.Builder[dashboard.Panel] {
	return []cog.Builder[dashboard.Panel]{
		series("Permits", units.Short, 8,
			"LIMIT permits (dashed), permits held now, and requests waiting for a permit. Waiters are bounded in time by LIMIT_WAIT: they get a permit or a 429.",
			query(`sum by (job) (orderlab_limiter_permits{job=~"$service"})`, "{{job}} permits"),
			query(`sum by (job) (orderlab_limiter_permits_in_use{job=~"$service"})`, "{{job}} in use"),
			query(`sum by (job) (orderlab_limiter_waiters{job=~"$service"})`, "{{job}} waiters"),
		).OverrideByRegexp(".* permits", dashed()).Min(0),

		series("Permit wait p99 by outcome", units.Seconds, 8,
			"Time waited for a permit (orderlab_limiter_wait_seconds). acquired: got one; rejected: gave up after LIMIT_WAIT and answered 429; canceled: the client went away.",
			quantile("0.99", "orderlab_limiter_wait_seconds", "job, outcome", "", "{{job}} {{outcome}}"),
		),

		series("Limiter rejections", units.RequestsPerSecond, 8,
			"Requests answered 429 because no permit came within LIMIT_WAIT (orderlab_limiter_rejections_total). Fast failure instead of a queue in front of the pool.",
			query(`sum by (job) (rate(orderlab_limiter_rejections_total{job=~"$service"}[$__rate_interval]))`, "{{job}}"),
		),
	}
}

func pipelinePanels() []cog.Builder[dashboard.Panel] {
	return []cog.Builder[dashboard.Panel]{
		series("Queue length vs capacity", units.Short, 8,
			"Items in each stage's input channel against its capacity (dashed). A full intake queue is backpressure: new requests wait up to ENQUEUE_WAIT, then get 429.",
			query(`sum by (job, stage) (orderlab_pipeline_queue_length{job=~"$service"})`, "{{stage}} length"),
			query(`sum by (job, stage) (orderlab_pipeline_queue_capacity{job=~"$service"})`, "{{stage}} capacity"),
		).OverrideByRegexp(".* capacity", dashed()).Min(0),

		series("Workers busy", units.Short, 8,
			"Goroutines running each stage (dashed) and how many are working on an item now. All busy with a growing queue: the stage is the bottleneck (the blocked event loop of the Java write-ups).",
			query(`sum by (job, stage) (orderlab_pipeline_workers{job=~"$service"})`, "{{stage}} workers"),
			query(`sum by (job, stage) (orderlab_pipeline_workers_busy{job=~"$service"})`, "{{stage}} busy"),
		).OverrideByRegexp(".* workers", dashed()).Min(0),

		series("Enqueue wait p99 and rejections", units.Seconds, 8,
			"Time a handler waited for an intake slot, by outcome (orderlab_pipeline_enqueue_wait_seconds), and, right axis, requests answered 429 because the intake queue was full (orderlab_pipeline_rejections_total).",
			quantile("0.99", "orderlab_pipeline_enqueue_wait_seconds", "job, outcome", "", "{{job}} {{outcome}}"),
			query(`sum by (job) (rate(orderlab_pipeline_rejections_total{job=~"$service"}[$__rate_interval]))`, "{{job}} rejections/s"),
		).OverrideByRegexp(".* rejections/s", append(rightAxis(units.RequestsPerSecond), fixedColor("orange")...)),

		series("Batch size", units.Short, 12,
			"Orders committed per transaction (orderlab_pipeline_batch_size, buckets 1..256). Batching is how the pipeline gets more orders/s out of the same connections: the bigger the batch, the further orders/s can exceed the pool's Little's-law bound.",
			query(`histogram_quantile(0.5, sum by (job, le) (rate(orderlab_pipeline_batch_size_bucket{job=~"$service"}[$__rate_interval])))`, "{{job}} p50"),
			query(`histogram_quantile(0.99, sum by (job, le) (rate(orderlab_pipeline_batch_size_bucket{job=~"$service"}[$__rate_interval])))`, "{{job}} p99"),
			query(`sum by (job) (rate(orderlab_pipeline_batch_size_sum{job=~"$service"}[$__rate_interval])) / sum by (job) (rate(orderlab_pipeline_batch_size_count{job=~"$service"}[$__rate_interval]))`, "{{job}} mean"),
		).OverrideByRegexp(".* mean", dashed()).Min(0),

		series("Batch commit time", units.Seconds, 12,
			"Time to run and commit one batch transaction, by outcome (orderlab_pipeline_batch_commit_seconds).",
			quantile("0.5", "orderlab_pipeline_batch_commit_seconds", "job, outcome", "", "{{job}} {{outcome}} p50"),
			quantile("0.99", "orderlab_pipeline_batch_commit_seconds", "job, outcome", "", "{{job}} {{outcome}} p99"),
		),
	}
}

func runtimePanels() []cog.Builder[dashboard.Panel] {
	return []cog.Builder[dashboard.Panel]{
		series("Goroutines", units.Short, 8,
			"One goroutine per in-flight request plus the pool's and the pipeline's own. Unbounded concurrency shows here first (the Go side of the Java write-ups' thread counts).",
			query(`sum by (job) (go_goroutines{job=~"$service"})`, "{{job}}"),
		),
		series("Pending audit writes", units.Short, 8,
			"Audit writes queued or running (AUDIT_DELAY; 0 when off). unbounded and semaphore start a goroutine per write with nothing to bound them, so this, goroutines and memory climb without limit under load (no backpressure); the pipeline's audit stage holds it at AUDIT_QUEUE plus AUDIT_WORKERS.",
			query(`sum by (job) (orderlab_audit_pending{job=~"$service"})`, "{{job}}"),
		),
		series("OS threads", units.Short, 8,
			"go_threads: goroutines blocked in syscalls or cgo each hold an OS thread (the Go shape of virtual-thread pinning; API_WAIT_MODE=syscall on /work/api shows it).",
			query(`sum by (job) (go_threads{job=~"$service"})`, "{{job}}"),
		),
		series("Memory", units.BytesIEC, 12,
			"Resident set size, and the Go heap in use (dashed). Per-request allocations (REQUEST_BUFFER_BYTES) multiplied by unbounded concurrency show up here; REQUEST_BUFFER_POOL=true reuses them.",
			query(`sum by (job) (process_resident_memory_bytes{job=~"$service"})`, "{{job}} RSS"),
			query(`sum by (job) (go_memstats_heap_inuse_bytes{job=~"$service"})`, "{{job}} heap in use"),
		).OverrideByRegexp(".* heap in use", dashed()),
		series("Open file descriptors", units.Short, 12,
			"Sockets and files: client connections plus pool connections.",
			query(`sum by (job) (process_open_fds{job=~"$service"})`, "{{job}}"),
		),
	}
}

// repeatPerService repeats a panel once per selected $service, side by
// side, three to a row.
func repeatPerService(p *timeseries.PanelBuilder) *timeseries.PanelBuilder {
	return p.Repeat("service").
		RepeatDirection(dashboard.PanelRepeatDirectionH).
		MaxPerRow(3).
		Span(24) // Grafana shares the row among the repeated panels
}

// series is a time series panel on the Prometheus datasource, 8 rows high.
func series(title, unit string, width uint32, description string, targets ...*prometheus.DataqueryBuilder) *timeseries.PanelBuilder {
	p := timeseries.NewPanelBuilder().
		Title(title).
		Description(description).
		Datasource(promDS()).
		Unit(unit).
		Span(width).
		Height(8).
		LineWidth(1).
		FillOpacity(10).
		ShowPoints(common.VisibilityModeNever).
		Legend(common.NewVizLegendOptionsBuilder().
			ShowLegend(true).
			DisplayMode(common.LegendDisplayModeList).
			Placement(common.LegendPlacementBottom)).
		Tooltip(common.NewVizTooltipOptionsBuilder().
			Mode(common.TooltipDisplayModeMulti).
			Sort(common.SortOrderDescending))
	for i, t := range targets {
		p = p.WithTarget(t.RefId(string(rune('A' + i))))
	}
	return p
}

// query is a range query with a legend.
func query(expr, legend string) *prometheus.DataqueryBuilder {
	q := prometheus.NewDataqueryBuilder().
		Datasource(promDS()).
		Expr(expr).
		Range().
		EditorMode(prometheus.QueryEditorModeCode)
	if legend != "" {
		q = q.LegendFormat(legend)
	}
	return q
}

// quantile is histogram_quantile over a native histogram, aggregated by the
// given labels (none: one series for the whole selection).
func quantile(phi, metric, by, matchers, legend string) *prometheus.DataqueryBuilder {
	sel := `job=~"$service"`
	if matchers != "" {
		sel += ", " + matchers
	}
	agg := "sum"
	if by != "" {
		agg = "sum by (" + by + ")"
	}
	return query("histogram_quantile("+phi+", "+agg+" (rate("+metric+"{"+sel+"}[$__rate_interval])))", legend)
}

func promDS() common.DataSourceRef {
	return common.DataSourceRef{Type: ptr("prometheus"), Uid: ptr(PrometheusUID)}
}

func grafanaDS() common.DataSourceRef {
	return common.DataSourceRef{Type: ptr("grafana"), Uid: ptr("-- Grafana --")}
}

func dashed() []dashboard.DynamicConfigValue {
	return []dashboard.DynamicConfigValue{{
		Id:    "custom.lineStyle",
		Value: map[string]any{"fill": "dash", "dash": []int{10, 10}},
	}}
}

func fixedColor(color string) []dashboard.DynamicConfigValue {
	return []dashboard.DynamicConfigValue{{
		Id:    "color",
		Value: map[string]any{"mode": "fixed", "fixedColor": color},
	}}
}

// rightAxis draws the overridden series against a right-hand axis in its
// own unit.
func rightAxis(unit string) []dashboard.DynamicConfigValue {
	return []dashboard.DynamicConfigValue{
		{Id: "custom.axisPlacement", Value: "right"},
		{Id: "unit", Value: unit},
	}
}

// rawQuery is a datasource query the SDK has no typed builder for (the
// built-in Grafana datasource's tag filter).
type rawQuery variants.UnknownDataquery

func (q rawQuery) Build() (variants.Dataquery, error) { return variants.UnknownDataquery(q), nil }

func ptr[T any](v T) *T { return &v }
