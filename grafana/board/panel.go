package board

import (
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

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

// repeatPerService repeats a panel once per selected $service, side by
// side, three to a row.
func repeatPerService(p *timeseries.PanelBuilder) *timeseries.PanelBuilder {
	return p.Repeat("service").
		RepeatDirection(dashboard.PanelRepeatDirectionH).
		MaxPerRow(3).
		Span(24) // Grafana shares the row among the repeated panels
}

func dashed() []dashboard.DynamicConfigValue {
	return []dashboard.DynamicConfigValue{{
		Id:    "custom.lineStyle",
		Value: map[string]any{"fill": "dash", "dash": []int{10, 10}},
	}}
}

func dotted() []dashboard.DynamicConfigValue {
	return []dashboard.DynamicConfigValue{{
		Id:    "custom.lineStyle",
		Value: map[string]any{"fill": "dot", "dash": []int{0, 10}},
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
