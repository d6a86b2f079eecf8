package htmlreport

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
// successes, then every OverTime metric, one series per run. A rate is drawn
// over RateWindow; its per-sample rate is a faint series per run, hidden
// until its legend entry ("<run>, per sample") is clicked.
func (b *Builder) HTTPCharts(runs []report.Run) []Chart {
	out := []Chart{b.percentiles(runs)}
	for _, m := range OverTime {
		series := make([][]Point, len(runs))
		nonzero := false
		for i, r := range runs {
			series[i] = m.windowed(r)
			for _, p := range series[i] {
				nonzero = nonzero || p.Y != 0
			}
		}
		if m.Optional && !nonzero {
			continue
		}
		sub := "x: seconds since the run started"
		var hidden map[string]bool
		if m.Rate {
			sub = fmt.Sprintf("rate over %s; per sample: click its legend entry", RateWindow)
			hidden = map[string]bool{}
			for _, r := range runs {
				hidden[RawName(r.Name)] = false
			}
		}
		line := charts.NewLine()
		global := b.init(m.Title, sub)
		if m.Rate { // two lines of legend: each run, then its per-sample rate
			global = append(global, charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Top: "bottom", Selected: hidden}),
				charts.WithGridOpts(opts.Grid{Left: "60", Right: "30", Top: "60", Bottom: "80"}))
		}
		line.SetGlobalOptions(append(global,
			charts.WithXAxisOpts(opts.XAxis{Type: "value", Name: "s", Min: "dataMin", Max: "dataMax",
				AxisLabel: &opts.AxisLabel{Formatter: opts.FuncOpts("function (v) { return +v.toPrecision(3); }")}}),
			charts.WithYAxisOpts(opts.YAxis{Type: "value", Name: m.Unit, AxisLine: &opts.AxisLine{OnZero: opts.Bool(false)}}))...)
		for i, r := range runs {
			line.AddSeries(r.Name, lineData(series[i]), charts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(len(series[i]) < 20)}),
				charts.WithItemStyleOpts(opts.ItemStyle{Color: color(i)}), charts.WithLineStyleOpts(opts.LineStyle{Color: color(i)}))
		}
		if m.Rate {
			for i, r := range runs {
				line.AddSeries(RawName(r.Name), lineData(m.over(r)), charts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(false)}),
					charts.WithItemStyleOpts(opts.ItemStyle{Color: color(i), Opacity: opts.Float(0.35)}),
					charts.WithLineStyleOpts(opts.LineStyle{Color: color(i), Width: 1, Opacity: opts.Float(0.35)}))
			}
		}
		out = append(out, snippet(line))
	}
	return out
}

// palette is ECharts' default one: a run's per-sample series takes its
// run's colour rather than the next one.
var palette = []string{"#5470c6", "#91cc75", "#fac858", "#ee6666", "#73c0de", "#3ba272", "#fc8452", "#9a60b4", "#ea7ccc"}

func color(i int) string { return palette[i%len(palette)] }

// RawName is the legend entry of a run's per-sample rate.
func RawName(run string) string { return run + ", per sample" }

func lineData(pts []Point) []opts.LineData {
	data := make([]opts.LineData, len(pts))
	for j, p := range pts {
		data[j] = opts.LineData{Value: []any{round(p.X), round(p.Y)}}
	}
	return data
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
