// Package board defines the lab's Grafana dashboard as code, with
// grafana-foundation-sdk. `go run ./grafana/generate` writes it to
// grafana/dashboards/, which Grafana provisions; a test keeps the committed
// JSON equal to what this package builds.
//
// Every query selects on job=~"$service" (sel, in query.go): one Prometheus
// job per concurrency model (prometheus/prometheus.yml), so the three
// services sit side by side as one line each, or as one repeated panel each.
// This file holds the board, its variable, links and annotations; the panels
// of each row live in a file named for the row (pool.go: "Postgres pool").
package board

// The v1 dashboard schema (JSON with a schemaVersion) is what Grafana 12 and
// 13 provision from files and migrate on load; the SDK already marks it
// deprecated in favour of the v2 (dynamic dashboards) schema.
//
//lint:file-ignore SA1019 v1 dashboard JSON is the stable file-provisioning format of the pinned Grafana

import (
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/variants"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"

	"github.com/orderlab/orderlab/loadtest/annotate"
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

// FrontPageURL is the lab's front page as compose publishes it.
const FrontPageURL = "http://127.0.0.1:8080/"

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
		// The lab's front page (lab front): run a scenario, read its verdicts.
		Link(dashboard.NewDashboardLinkBuilder("Front page: run a pitfall").
			Type(dashboard.DashboardLinkTypeLink).
			Url(FrontPageURL).
			Icon("external link").
			TargetBlank(true)).
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
		Annotation(alertAnnotations()).
		Annotation(knobChangeAnnotations())

	b = b.WithRow(dashboard.NewRowBuilder("Overview (last minute)")).
		WithPanel(scoreboard()).
		WithPanel(firing())
	for _, row := range []struct {
		title  string
		panels []cog.Builder[dashboard.Panel]
	}{
		{"Traffic and errors", trafficPanels()},
		{"Tail latency (exemplars link to traces)", latencyPanels()},
		{"Postgres pool", poolPanels()},
		{"Postgres server (postgres_exporter)", postgresPanels()},
		{"PgBouncer (pgbouncer_exporter; pgbouncer profile only)", pgbouncerPanels()},
		{"Semaphore (semaphore service)", semaphorePanels()},
		{"Pipeline (pipeline service)", pipelinePanels()},
		{"Go runtime and process", runtimePanels()},
		{"Knobs", knobPanels()},
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
	inTheBar(&d)
	return d, nil
}

// inTheBar shows the board's links and annotation toggles in the bar above
// the panels. The SDK gives each a placement of "inControlsMenu", which
// Grafana (12.3 and later) renders inside the dashboard-controls dropdown
// instead; a link or annotation without a placement sits above the panels
// (the placement field of Grafana's dashboard schema, @grafana/schema).
func inTheBar(d *dashboard.Dashboard) {
	for i := range d.Links {
		d.Links[i].Placement = nil
	}
	for i := range d.Annotations.List {
		d.Annotations.List[i].Placement = nil
	}
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

// loadRunAnnotations shows the runs loadtest and lab post to Grafana's annotation
// API when GRAFANA_URL is set: organisation-wide annotations tagged
// annotate.Tag.
func loadRunAnnotations() *dashboard.AnnotationQueryBuilder {
	return dashboard.NewAnnotationQueryBuilder().
		Name("Load runs").
		Datasource(grafanaDS()).
		Enable(true).
		IconColor("purple").
		Target(rawQuery{
			"type":     "tags",
			"tags":     []string{annotate.Tag},
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
		Expr(`ALERTS{alertstate="firing", ` + serviceMatcher + `}`).
		Step("15s").
		TitleFormat("{{alertname}}").
		TextFormat("{{job}}: {{alertname}} ({{severity}})").
		TagKeys("alertname,job,severity")
}

// rawQuery is a datasource query the SDK has no typed builder for (the
// built-in Grafana datasource's tag filter).
type rawQuery variants.UnknownDataquery

func (q rawQuery) Build() (variants.Dataquery, error) { return variants.UnknownDataquery(q), nil }
