package board

import (
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
)

// serviceMatcher keeps a query to the services picked in the $service
// variable: one Prometheus job per concurrency model
// (prometheus/prometheus.yml). Every query of the board carries it, through
// sel; only the alert annotation, whose matcher comes second, spells it out.
const serviceMatcher = `job=~"$service"`

// apiRoutes excludes the health checks from request and latency panels: the
// compose healthchecks hit them every few seconds and they would dilute the
// quantiles.
const apiRoutes = `route!~"/livez|/readyz"`

// sel is the series selector metric{job=~"$service", matchers...}.
func sel(metric string, matchers ...string) string {
	return metric + "{" + strings.Join(append([]string{serviceMatcher}, matchers...), ", ") + "}"
}

// rate is the per-second rate of a counter or histogram over Grafana's
// $__rate_interval.
func rate(selector string) string {
	return "rate(" + selector + "[$__rate_interval])"
}

// sum adds up every series of expr.
func sum(expr string) string {
	return "sum(" + expr + ")"
}

// sumBy adds up the series of expr per value of labels ("job, stage").
func sumBy(labels, expr string) string {
	return "sum by (" + labels + ") (" + expr + ")"
}

// maxBy is the largest series of expr per value of labels: for a gauge
// that several replicas of a job expose, such as an age.
func maxBy(labels, expr string) string {
	return "max by (" + labels + ") (" + expr + ")"
}

// meanByJob is the mean per job over the rate interval: the rate of a
// running total (seconds waited, orders batched) over the rate of its count.
func meanByJob(total, count string) string {
	return sumBy("job", rate(sel(total))) + " / " + sumBy("job", rate(sel(count)))
}

// quantile is histogram_quantile over the native histogram metric, limited
// to $service and matchers, and aggregated by the given labels (none: one
// series for the whole selection).
func quantile(phi, metric, by, legend string, matchers ...string) *prometheus.DataqueryBuilder {
	agg := "sum"
	if by != "" {
		agg = "sum by (" + by + ")"
	}
	return query("histogram_quantile("+phi+", "+agg+" ("+rate(sel(metric, matchers...))+"))", legend)
}

// classicQuantile is histogram_quantile over a classic histogram's
// _bucket series (the Go runtime's histograms have no native form), per
// value of by.
func classicQuantile(phi, metric, by, legend string) *prometheus.DataqueryBuilder {
	return query("histogram_quantile("+phi+", "+sumBy(by+", le", rate(sel(metric+"_bucket")))+")", legend)
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

func promDS() common.DataSourceRef {
	return common.DataSourceRef{Type: ptr("prometheus"), Uid: ptr(PrometheusUID)}
}

func grafanaDS() common.DataSourceRef {
	return common.DataSourceRef{Type: ptr("grafana"), Uid: ptr("-- Grafana --")}
}

func ptr[T any](v T) *T { return &v }
