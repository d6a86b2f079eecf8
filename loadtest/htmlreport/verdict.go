package htmlreport

import (
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Row is one service in one phase of a verdict picture.
type Row struct {
	Label string // e.g. "semaphore, orders"
	Color int    // the service's place in the run: its colour in every chart
	// Counts names what PerSecond counts: "committed" (orders) or
	// "succeeded" (successful answers of a phase that commits nothing).
	Counts    string
	PerSecond float64
	Bound     float64 // the phase's bound per second; 0: it states none
	// AtLeast is the multiple of the bound its expectation asks for at
	// least; 0: none does.
	AtLeast float64
	// P99 and P99Target are the success p99 and what it must stay under,
	// in seconds (0: none).
	P99, P99Target float64
	Status         map[string]int64 // answers by status code
	// MissedRate, MissedP99 and MissedOther mark a term of its expectations
	// it missed: on its per-second figure, on its p99, on another figure
	// (errors, rejections: the answers by status).
	MissedRate, MissedP99, MissedOther bool
}

// Drawing is a chart as an ECharts option, plain JSON (no functions), so
// that the report and the front page draw the same one; Height is the
// height it needs, in pixels, at any width from about 900 px.
type Drawing struct {
	Height int            `json:"height"`
	Option map[string]any `json:"option"`
}

// Verdict colours: a miss is red; a target a dark ▲.
const (
	missColor   = "#c4161c"
	targetColor = "#222"
)

// barLabel is a bar's figure right of it, dark on white, so that it reads
// inside the end of a bar too (rates puts it there when the bar ends just
// short of the bound's line).
var barLabel = map[string]any{"show": true, "position": "right", "fontSize": 11, "color": "#222", "backgroundColor": "#fff", "padding": []int{1, 3}}

// target is a series of targets (value, row) on panel: each a triangle
// under its row's bar, pointing up at the figure, clear of the bar's label.
func target(name string, panel int, points []any) map[string]any {
	return map[string]any{"name": name, "type": "scatter", "xAxisIndex": panel, "yAxisIndex": panel, "data": points,
		"symbol": "triangle", "symbolSize": 9, "symbolOffset": []int{0, barWidth/2 + 4}, "itemStyle": map[string]any{"color": targetColor}}
}

// Geometry of the verdict picture: a row per service and phase, each panel
// a horizontal bar per row, so that the rows' names read without rotating.
const (
	rowHeight     = 32
	barWidth      = 16
	verdictTop    = 78 // the titles and the legend
	verdictBottom = 34 // the axes' labels and names
)

// VerdictDrawing is the verdict picture of rows, in three panels that share
// the rows: what each committed per second as a multiple of its phase's
// bound, on a log scale so that 0.95 × and 20 × both read (the bound a
// dashed line at 1 ×, what an expectation asks at least a ▲); its success p99
// against its target; its answers by status. A row without a bound shows
// its figure in words at the left edge; when no row has one, the first
// panel draws the figures themselves, still on a log scale. What missed is
// red, its row's name marked ✗.
func VerdictDrawing(rows []Row) Drawing {
	n := len(rows)
	cats := make([]any, n)
	for i, r := range rows {
		c := map[string]any{"value": r.Label}
		if r.MissedRate || r.MissedP99 || r.MissedOther {
			c["value"] = "✗ " + r.Label
			c["textStyle"] = map[string]any{"color": missColor, "fontWeight": "bold"}
		}
		cats[i] = c
	}
	grids := []map[string]any{
		{"left": "1%", "width": "45%", "top": verdictTop, "bottom": verdictBottom, "containLabel": true},
		{"left": "50%", "width": "22%", "top": verdictTop, "bottom": verdictBottom, "containLabel": true},
		{"left": "75%", "width": "23%", "top": verdictTop, "bottom": verdictBottom, "containLabel": true},
	}
	yAxes := make([]any, 3)
	for i := range yAxes {
		yAxes[i] = map[string]any{"type": "category", "gridIndex": i, "data": cats, "inverse": true,
			"axisLabel": map[string]any{"show": i == 0, "fontSize": 11}, "axisTick": map[string]any{"show": i == 0}}
	}
	ratePanel, rateAxis, relative := rates(rows)
	p99Panel, p99Axis := p99s(rows)
	statusPanel, codes := statuses(rows)
	rateTitle := capital(counted(rows)) + "/s as a multiple of the phase's bound (log scale)"
	sub := "dashed: the bound (1 ×); ▲: what the expectation asks at least; red ✗: missed"
	if !relative {
		rateTitle, sub = capital(counted(rows))+" per second (log scale)", "no phase states a bound; red ✗: missed"
	}
	option := map[string]any{
		"animation": false,
		"title": []any{
			map[string]any{"text": rateTitle, "subtext": sub, "left": "1%", "textStyle": map[string]any{"fontSize": 13}, "subtextStyle": map[string]any{"fontSize": 11}},
			map[string]any{"text": "Success p99 against its target", "subtext": "▲: the target (under it); red ✗: missed", "left": "50%", "textStyle": map[string]any{"fontSize": 13}, "subtextStyle": map[string]any{"fontSize": 11}},
			map[string]any{"text": "Answers by status", "left": "75%", "textStyle": map[string]any{"fontSize": 13}},
		},
		"tooltip": map[string]any{"trigger": "item"},
		"legend":  map[string]any{"data": codes, "left": "75%", "top": 24, "itemWidth": 14, "textStyle": map[string]any{"fontSize": 11}},
		"grid":    grids,
		"xAxis":   []any{rateAxis, p99Axis, map[string]any{"type": "value", "gridIndex": 2, "name": "answers", "nameLocation": "middle", "nameGap": 22, "splitNumber": 2, "axisLabel": map[string]any{"fontSize": 10}}},
		"yAxis":   yAxes,
		"series":  slices.Concat(ratePanel, p99Panel, statusPanel),
	}
	return Drawing{Height: verdictTop + verdictBottom + max(n, 2)*rowHeight + 8, Option: option}
}

// Verdict is VerdictDrawing as a chart of a report, the width of two.
func (b *Builder) Verdict(rows []Row) Chart {
	d := VerdictDrawing(rows)
	id := b.id()
	opt, err := json.Marshal(d.Option) // escapes <, > and &: safe in a script
	if err != nil {
		panic(err) // maps of strings, numbers and slices always encode
	}
	return Chart{
		Element: template.HTML(fmt.Sprintf(`<div class="container"><div class="item" id="%s" style="width:1168px;height:%dpx;"></div></div>`, id, d.Height)),
		Script: template.HTML(fmt.Sprintf(`<script type="text/javascript">"use strict"; echarts.init(document.getElementById('%s'), "white", { renderer: "canvas" }).setOption(%s);</script>`,
			id, opt)),
	}
}

// counted is what the rows count per second: "committed" when every row
// commits orders.
func counted(rows []Row) string {
	for _, r := range rows {
		if r.Counts != "committed" {
			return "succeeded"
		}
	}
	return "committed"
}

// LogRange is the extent of a log axis that holds values and the labels
// right of their bars: from the power of ten at or below half the
// smallest (1 when none is smaller), so that every bar is at least 0.3 of
// a decade long (0.95 × most of a decade), but not below 0.01, so that a
// service that committed next to nothing does not squeeze the others into
// a corner (its bar is empty, its figure in words); to the power of ten at
// least half a decade above the largest.
func LogRange(values ...float64) (lo, hi float64) {
	small, big := 1.0, 1.0
	for _, v := range values {
		if v > 0 && !math.IsInf(v, 0) {
			small, big = min(small, v), max(big, v)
		}
	}
	lo = max(0.01, math.Pow(10, math.Floor(math.Log10(small/2))))
	hi = math.Pow(10, math.Ceil(math.Log10(big)+0.5))
	return lo, hi
}

// rates is the first panel: each row's per-second figure as a multiple of
// its bound (relative), or, when no row has a bound, the figure itself; and
// its axis.
func rates(rows []Row) (series []any, axis map[string]any, relative bool) {
	relative = slices.ContainsFunc(rows, func(r Row) bool { return r.Bound > 0 })
	value := func(r Row) float64 { return r.PerSecond }
	if relative {
		value = func(r Row) float64 {
			if r.Bound <= 0 {
				return 0
			}
			return r.PerSecond / r.Bound
		}
	}
	var all []float64
	for _, r := range rows {
		all = append(all, value(r), r.AtLeast)
	}
	lo, hi := LogRange(all...)
	bars, ticks := make([]any, len(rows)), []any{}
	for i, r := range rows {
		v := value(r)
		text := perSecond(r.PerSecond) + "/s"
		switch {
		case r.PerSecond <= 0:
			text = "none " + r.Counts
		case relative && r.Bound <= 0:
			text += ", no bound"
		case relative:
			text = multiple(v) + " × · " + text
		}
		bar := map[string]any{"value": v, "itemStyle": map[string]any{"color": color(r.Color)},
			"label": map[string]any{"formatter": text}}
		if v < lo { // a log axis has no 0: the words at its left edge
			bar["value"] = lo
		}
		// A bar that ends a little short of the bound has its figure inside
		// its end: right of it, the bound's line (drawn over the bars
		// whatever its z) would cross the figure.
		inside := relative && v < 1 && math.Log(v/lo) >= 0.3*math.Log(hi/lo)
		if r.MissedRate {
			bar["itemStyle"] = map[string]any{"color": color(r.Color), "borderColor": missColor, "borderWidth": 2}
			bar["label"] = map[string]any{"formatter": "✗ " + text, "color": missColor, "fontWeight": "bold"}
		}
		if inside {
			bar["label"].(map[string]any)["position"] = "insideRight"
		}
		bars[i] = bar
		if relative && r.AtLeast > 0 {
			ticks = append(ticks, []any{r.AtLeast, i})
		}
	}
	name := counted(rows) + "/s"
	series = []any{map[string]any{
		"name": map[bool]string{true: name + " ÷ bound", false: name}[relative], "type": "bar", "xAxisIndex": 0, "yAxisIndex": 0, "data": bars, "barMaxWidth": barWidth,
		"label": barLabel,
	}}
	axis = map[string]any{"type": "log", "logBase": 10, "gridIndex": 0, "min": lo, "max": hi,
		// Bars rise from the axis's left edge: from 1 they would go
		// left for anything under the bound, and 0.95 × would be a sliver.
		"startValue": lo, "nameLocation": "middle", "nameGap": 22, "axisLabel": map[string]any{"fontSize": 10}}
	if !relative {
		axis["name"] = name
		return series, axis, false
	}
	axis["name"] = "× bound"
	axis["axisLabel"] = map[string]any{"fontSize": 10, "formatter": "{value} ×"}
	series[0].(map[string]any)["markLine"] = map[string]any{"symbol": "none", "silent": true,
		"lineStyle": map[string]any{"type": "dashed", "color": "#555", "width": 1.5},
		"label":     map[string]any{"formatter": "bound", "position": "start", "fontSize": 10},
		"data":      []any{map[string]any{"xAxis": 1}}}
	if len(ticks) > 0 {
		series = append(series, target("expected at least (× bound)", 0, ticks))
	}
	return series, axis, true
}

// p99s is the second panel: each row's success p99 against its target, in
// ms, and its axis.
func p99s(rows []Row) ([]any, map[string]any) {
	bars, ticks := make([]any, len(rows)), []any{}
	for i, r := range rows {
		ms := 1000 * r.P99
		text := perSecond(ms) + " ms"
		bar := map[string]any{"value": round(ms), "itemStyle": map[string]any{"color": color(r.Color)}, "label": map[string]any{"formatter": text}}
		if r.P99 <= 0 {
			bar["value"], bar["label"] = "-", map[string]any{"formatter": "no success"}
		}
		if r.MissedP99 {
			bar["itemStyle"] = map[string]any{"color": color(r.Color), "borderColor": missColor, "borderWidth": 2}
			bar["label"] = map[string]any{"formatter": "✗ " + text, "color": missColor, "fontWeight": "bold"}
		}
		bars[i] = bar
		if r.P99Target > 0 {
			ticks = append(ticks, []any{round(1000 * r.P99Target), i})
		}
	}
	series := []any{map[string]any{"name": "success p99 (ms)", "type": "bar", "xAxisIndex": 1, "yAxisIndex": 1, "data": bars, "barMaxWidth": barWidth,
		"label": barLabel}}
	if len(ticks) > 0 {
		series = append(series, target("p99 target (ms)", 1, ticks))
	}
	// Room right of the longest bar for its label.
	axis := map[string]any{"type": "value", "gridIndex": 1, "name": "ms", "nameLocation": "middle", "nameGap": 22,
		"boundaryGap": []string{"0", "45%"}, "splitNumber": 3, "axisLabel": map[string]any{"fontSize": 10}}
	return series, axis
}

// statuses is the third panel: each row's answers by status code,
// stacked, and the codes in order.
func statuses(rows []Row) ([]any, []string) {
	var codes []string
	for _, r := range rows {
		for c := range r.Status {
			if !slices.Contains(codes, c) {
				codes = append(codes, c)
			}
		}
	}
	slices.Sort(codes)
	series := make([]any, 0, len(codes))
	for _, c := range codes {
		data := make([]any, len(rows))
		for i, r := range rows {
			data[i] = r.Status[c]
		}
		s := map[string]any{"name": c, "type": "bar", "stack": "status", "xAxisIndex": 2, "yAxisIndex": 2, "data": data, "barMaxWidth": barWidth}
		if col, ok := statusColors[c[:1]]; ok {
			s["itemStyle"] = map[string]any{"color": col}
		}
		series = append(series, s)
	}
	return series, codes
}

// statusColors colour the answers by class: successes green, refusals
// amber, failures red; the same codes the same colour in every run.
var statusColors = map[string]string{"2": "#3ba272", "4": "#fac858", "5": "#ee6666"}

// perSecond writes a figure as the verdicts do: 95, 12.5, 2,078.
func perSecond(v float64) string {
	if v < 100 && v != math.Trunc(v) {
		return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
	}
	s := strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// multiple writes a multiple of the bound: 0.003, 0.95, 1.20, 20.5, 181.
func multiple(v float64) string {
	switch {
	case v < 0.1:
		return strconv.FormatFloat(v, 'g', 2, 64)
	case v < 10:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case v < 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return perSecond(v)
}

func capital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
