package board

import (
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/statetimeline"
)

// FiringTitle is the title of the panel of pitfall alerts: the lab's front
// page links it by its id (PanelIDs).
const FiringTitle = "What is firing: pitfalls named by the alerts"

// firing is the board's own diagnosis: every pitfall alert of
// prometheus/rules/pitfalls.yml (the alerts with a pitfall label) that
// fires, one line per pitfall and service, over the board's range. It is
// what `lab diagnose` and the front page's "What the lab sees" read, drawn
// in time: a line starts when the alert has held for its rule's `for`.
func firing() *statetimeline.PanelBuilder {
	expr := maxBy("pitfall, service", sel("ALERTS", `alertstate="firing"`, `pitfall!=""`))
	mapping := dashboard.ValueMapping{ValueMap: &dashboard.ValueMap{
		Type:    dashboard.MappingTypeValueToText,
		Options: map[string]dashboard.ValueMappingResult{"1": {Text: ptr("firing"), Color: ptr("red")}},
	}}
	return statetimeline.NewPanelBuilder().
		Title(FiringTitle).
		Description("Each pitfall alert (prometheus/rules/pitfalls.yml, the rules with a pitfall label) while it fires, as pitfall on service. Empty when the lab sees no pitfall, which is how a healthy lab looks. The alert's summary and evidence: Prometheus' alerts page, `lab diagnose`, or the front page's \"What the lab sees\"; how to read each pitfall: docs/diagnose.md.").
		Datasource(promDS()).
		Span(24).Height(5).
		WithTarget(query(expr, "{{pitfall}} on {{service}}").RefId("A")).
		Mappings([]dashboard.ValueMapping{mapping}).
		NoValue("no pitfall firing").
		ShowValue(common.VisibilityModeNever).
		MergeValues(true).
		RowHeight(0.8).
		Legend(common.NewVizLegendOptionsBuilder().ShowLegend(false).DisplayMode(common.LegendDisplayModeList).Placement(common.LegendPlacementBottom))
}
