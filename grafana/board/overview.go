package board

import (
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/units"
)

// scoreboardColumns are the scoreboard's columns: the recording rules of
// prometheus/rules/recording.yml, one row per service.
var scoreboardColumns = []struct {
	title, expr, unit string
	thresholds        []float64 // orange and red from these values on
}{
	{"req/s", sel("job:orderlab_http_requests:rate1m"), units.RequestsPerSecond, nil},
	{"p50", sel("job:orderlab_http_request_duration_seconds:p50_1m"), units.Seconds, nil},
	{"p99", sel("job:orderlab_http_request_duration_seconds:p99_1m"), units.Seconds, []float64{0.25, 0.5}},
	{"p99.9", sel("job:orderlab_http_request_duration_seconds:p999_1m"), units.Seconds, nil},
	// unbounded never rejects: 0, not a blank cell.
	{"rejected (429)", sel("job:orderlab_rejections:ratio_rate1m") + " or 0 * " + sel("job:orderlab_http_requests:rate1m"), units.PercentUnit, []float64{0.01, 0.05}},
	{"acquire wait p99", sel("job:orderlab_db_pool_acquire_wait_seconds:p99_1m"), units.Seconds, []float64{0.01, 0.1}},
	{"acquires that waited", sel("job:orderlab_db_pool_acquires_waited:ratio_rate1m"), units.PercentUnit, []float64{0.2, 0.5}},
	{"canceled acquires/s", sel("job:orderlab_db_pool_acquires_canceled:rate1m"), units.OpsPerSecond, []float64{0.001, 1}},
	{"pool utilisation", sel("job:orderlab_db_pool_utilization:ratio"), units.PercentUnit, nil},
	{"acquires/s", sel("job:orderlab_db_pool_acquires:rate1m"), units.OpsPerSecond, nil},
	{"pool bound (Little)", sel("job:orderlab_db_pool_littles_law_bound:rate1m"), units.OpsPerSecond, nil},
}

// scoreboard is the row "Overview (last minute)": the three models in one
// table, from the recording rules, cheap to refresh, and the numbers the
// alerts look at.
func scoreboard() *table.PanelBuilder {
	p := table.NewPanelBuilder().
		Title("Scoreboard").
		Description("One row per service, over the last minute, from the recording rules (the inputs of the alerts). Orange and red cells: acquire wait and waiting acquires mean pool starvation (PoolStarvation), a long p99 is TailLatencyHigh, many 429s RejectionsHigh. 'pool bound' is Little's law: max connections / mean hold time, the most acquires per second the pool can serve.").
		Datasource(promDS()).
		Span(24).Height(6).
		Footer(common.NewTableFooterOptionsBuilder().Show(false).Reducer([]string{})).
		WithTransformation(dashboard.DataTransformerConfig{Id: "merge", Options: map[string]any{}})
	// Joined with orderlab_service_info: every row also names its model.
	model := " * on (job) group_left (model) max by (job, model) (" + sel("orderlab_service_info") + ")"
	rename := map[string]any{}
	index := map[string]any{"job": 0, "model": 1}
	for i, c := range scoreboardColumns {
		ref := string(rune('A' + i))
		p = p.WithTarget(query("("+c.expr+")"+model, "").Instant().Format(prometheus.PromQueryFormatTable).RefId(ref))
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
