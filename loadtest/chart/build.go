package chart

import (
	"fmt"
	"math"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/orderlab/orderlab/loadtest/report"
)

// size of each chart: two fit side by side on a laptop screen.
const width, height = "580px", "300px"

// Builder numbers the charts of a page so that their element ids are unique
// and stable.
type Builder struct{ n int }

func (b *Builder) id() string { b.n++; return fmt.Sprintf("chart%d", b.n) }

func (b *Builder) init(title, sub string) []charts.GlobalOpts {
	return []charts.GlobalOpts{
		charts.WithInitializationOpts(opts.Initialization{Width: width, Height: height, ChartID: b.id()}),
		charts.WithTitleOpts(opts.Title{Title: title, Subtitle: sub}),
		charts.WithAnimation(false),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Top: "bottom"}),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"}),
		charts.WithGridOpts(opts.Grid{Left: "60", Right: "30", Top: "60", Bottom: "55"}),
	}
}

// HTTPCharts are the charts of an HTTP phase: latency percentiles of the
// successes, then every OverTime metric, one series per run.
func (b *Builder) HTTPCharts(runs []report.Run) []Chart {
	out := []Chart{b.percentiles(runs)}
	for _, m := range OverTime {
		series := make([][]Point, len(runs))
		nonzero := false
		for i, r := range runs {
			series[i] = m.over(r)
			for _, p := range series[i] {
				nonzero = nonzero || p.Y != 0
			}
		}
		if m.Optional && !nonzero {
			continue
		}
		line := charts.NewLine()
		line.SetGlobalOptions(append(b.init(m.Title, "x: seconds since the run started"),
			charts.WithXAxisOpts(opts.XAxis{Type: "value", Name: "s", Min: "dataMin", Max: "dataMax",
				AxisLabel: &opts.AxisLabel{Formatter: opts.FuncOpts("function (v) { return +v.toPrecision(3); }")}}),
			charts.WithYAxisOpts(opts.YAxis{Type: "value", Name: m.Unit, AxisLine: &opts.AxisLine{OnZero: opts.Bool(false)}}))...)
		for i, r := range runs {
			data := make([]opts.LineData, len(series[i]))
			for j, p := range series[i] {
				data[j] = opts.LineData{Value: []any{round(p.X), round(p.Y)}}
			}
			line.AddSeries(r.Name, data, charts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(len(data) < 20)}))
		}
		out = append(out, snippet(line))
	}
	return out
}

// percentiles is a bar chart of p50..max of the successes, per run.
func (b *Builder) percentiles(runs []report.Run) Chart {
	bar := charts.NewBar()
	bar.SetGlobalOptions(append(b.init("Latency percentiles (successes)", "client side, coordinated-omission corrected in open runs"),
		charts.WithYAxisOpts(opts.YAxis{Type: "log", Name: "ms"}))...)
	bar.SetXAxis([]string{"p50", "p90", "p99", "p99.9", "max"})
	for _, r := range runs {
		l := r.Latency.Success
		var v []float64
		if l != nil && l.Count > 0 {
			v = []float64{l.P50, l.P90, l.P99, l.P999, l.Max}
		}
		data := make([]opts.BarData, 5)
		for i := range data {
			data[i] = opts.BarData{Value: "-"} // echarts: no value
			if i < len(v) {
				data[i] = opts.BarData{Value: round(math.Max(v[i]*1e3, 0.001))}
			}
		}
		bar.AddSeries(r.Name, data)
	}
	return snippet(bar)
}

// Bars is one bar per label, e.g. the elapsed time of each task model.
func (b *Builder) Bars(title, unit string, labels []string, values []float64) Chart {
	bar := charts.NewBar()
	bar.SetGlobalOptions(append(b.init(title, ""),
		charts.WithYAxisOpts(opts.YAxis{Type: "value", Name: unit}))...)
	bar.SetXAxis(labels)
	data := make([]opts.BarData, len(values))
	for i, v := range values {
		data[i] = opts.BarData{Value: round(v)}
	}
	bar.AddSeries(title, data)
	return snippet(bar)
}

// round keeps four significant digits, so the HTML stays small.
func round(v float64) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	p := math.Pow(10, 3-math.Floor(math.Log10(math.Abs(v))))
	return math.Round(v*p) / p
}
