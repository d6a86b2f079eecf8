package htmlreport

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// compareRows are a quick pool-starvation's: the semaphore just under its
// bound of 100/s, the pipeline at 20 times it, unbounded committing
// nothing; the semaphore's p99 missed its target.
func compareRows() []Row {
	return []Row{
		{Label: "unbounded", Color: 0, Counts: "committed", PerSecond: 0, Bound: 100, P99: 0, Status: map[string]int64{"503": 400}},
		{Label: "semaphore", Color: 1, Counts: "committed", PerSecond: 95, Bound: 100, AtLeast: 0.85, P99: 0.6, P99Target: 0.5,
			Status: map[string]int64{"201": 950, "429": 9000}, MissedP99: true},
		{Label: "pipeline", Color: 2, Counts: "committed", PerSecond: 2000, Bound: 100, P99: 0.3, Status: map[string]int64{"201": 20000}},
	}
}

// decoded is the drawing as the browser gets it: JSON.
func decoded(t *testing.T, d Drawing) map[string]any {
	t.Helper()
	b, err := json.Marshal(d.Option)
	if err != nil {
		t.Fatalf("the option is not plain JSON: %v", err)
	}
	var o map[string]any
	if err := json.Unmarshal(b, &o); err != nil {
		t.Fatal(err)
	}
	return o
}

func index(o map[string]any, key string, i int) map[string]any {
	return o[key].([]any)[i].(map[string]any)
}

// seriesNamed is the first series of o whose name starts with prefix.
func seriesNamed(t *testing.T, o map[string]any, prefix string) map[string]any {
	t.Helper()
	for _, s := range o["series"].([]any) {
		if m := s.(map[string]any); strings.HasPrefix(m["name"].(string), prefix) {
			return m
		}
	}
	t.Fatalf("no series named %q…", prefix)
	return nil
}

// share is where v lies along a log axis from lo to hi, 0 to 1: the
// length of a bar that rises from lo.
func share(v, lo, hi float64) float64 { return math.Log(v/lo) / math.Log(hi/lo) }

func TestTheVerdictDrawsUnderAndFarOverTheBoundOnOneLogScale(t *testing.T) {
	o := decoded(t, VerdictDrawing(compareRows()))
	axis := index(o, "xAxis", 0)
	lo, hi := axis["min"].(float64), axis["max"].(float64)
	if axis["type"] != "log" || axis["startValue"] != lo || axis["name"] != "× bound" {
		t.Fatalf("first panel's axis %v: want a log scale of multiples of the bound, bars rising from its left edge", axis)
	}
	title := index(o, "title", 0)["text"].(string)
	if !strings.HasPrefix(title, "Committed/s as a multiple of the phase's bound") {
		t.Errorf("first panel's title %q: want it to say it counts commits against the bound", title)
	}
	bars := seriesNamed(t, o, "committed/s")["data"].([]any)
	value := func(i int) float64 { return bars[i].(map[string]any)["value"].(float64) }
	if value(1) != 0.95 || value(2) != 20 {
		t.Fatalf("bars %v, %v: want 0.95 and 20 times the bound", value(1), value(2))
	}
	under, over, bound := share(0.95, lo, hi), share(20, lo, hi), share(1, lo, hi)
	if under < 0.25 || over-under < 0.25 || over > 0.8 {
		t.Errorf("on %g..%g, 0.95 × is %.2f of the width and 20 × %.2f: want both long (≥ 0.25), apart (≥ 0.25) and room right of 20 × for its figure",
			lo, hi, under, over)
	}
	if !(under < bound && bound < over) {
		t.Errorf("the bound at %.2f of the width, 0.95 × ending at %.2f and 20 × at %.2f: want it between", bound, under, over)
	}
	line := seriesNamed(t, o, "committed/s")["markLine"].(map[string]any)["data"].([]any)[0].(map[string]any)
	if line["xAxis"] != 1.0 {
		t.Errorf("the bound's line %v: want it at 1 ×", line)
	}
	// Nothing committed: an empty bar at the left edge, the fact in words.
	none := bars[0].(map[string]any)
	if none["value"] != lo || none["label"].(map[string]any)["formatter"] != "none committed" {
		t.Errorf("unbounded's bar %v: want it empty, saying none committed", none)
	}
	if f := bars[2].(map[string]any)["label"].(map[string]any)["formatter"]; f != "20.0 × · 2,000/s" {
		t.Errorf("pipeline's figure %q: want the multiple and the committed/s", f)
	}
	// The semaphore's floor, 0.85 ×, under its row.
	floors := seriesNamed(t, o, "expected at least")["data"].([]any)
	if len(floors) != 1 || floors[0].([]any)[0] != 0.85 || floors[0].([]any)[1] != 1.0 {
		t.Errorf("floors %v: want the semaphore's 0.85 × on its row", floors)
	}
}

func TestTheVerdictMarksWhatMissed(t *testing.T) {
	rows := compareRows()
	rows[2].MissedRate = true
	o := decoded(t, VerdictDrawing(rows))
	cats := index(o, "yAxis", 0)["data"].([]any)
	for i, want := range []string{"unbounded", "✗ semaphore", "✗ pipeline"} {
		c := cats[i].(map[string]any)
		if c["value"] != want || (strings.HasPrefix(want, "✗") != (c["textStyle"] != nil)) {
			t.Errorf("row %d named %v: want %q, in red when it missed", i, c, want)
		}
	}
	missed := func(series map[string]any, i int) bool {
		bar := series["data"].([]any)[i].(map[string]any)
		style := bar["itemStyle"].(map[string]any)
		label, _ := bar["label"].(map[string]any)
		return style["borderColor"] == missColor && strings.HasPrefix(label["formatter"].(string), "✗ ")
	}
	rate, p99 := seriesNamed(t, o, "committed/s"), seriesNamed(t, o, "success p99")
	if missed(rate, 1) || !missed(rate, 2) || !missed(p99, 1) || missed(p99, 2) {
		t.Errorf("want the pipeline's committed/s and the semaphore's p99 marked missed, and nothing else")
	}
	targets := seriesNamed(t, o, "p99 target")["data"].([]any)
	if len(targets) != 1 || targets[0].([]any)[0] != 500.0 {
		t.Errorf("p99 targets %v: want the semaphore's 500 ms", targets)
	}
	if p := p99["data"].([]any)[1].(map[string]any)["value"]; p != 600.0 {
		t.Errorf("semaphore's p99 bar %v: want 600 ms", p)
	}
}

func TestWithoutABoundTheFirstPanelDrawsTheFigures(t *testing.T) {
	rows := []Row{{Label: "unbounded", Counts: "committed", PerSecond: 1000}, {Label: "pipeline", Counts: "succeeded", PerSecond: 17.6}}
	o := decoded(t, VerdictDrawing(rows))
	axis := index(o, "xAxis", 0)
	bars := seriesNamed(t, o, "succeeded/s")
	if axis["type"] != "log" || axis["name"] != "succeeded/s" || bars["markLine"] != nil {
		t.Errorf("axis %v, series %v: want the figures on a log scale, with no bound", axis, bars["name"])
	}
	if v := bars["data"].([]any)[1].(map[string]any)["value"]; v != 17.6 {
		t.Errorf("pipeline's bar %v: want its 17.6/s", v)
	}
	if title := index(o, "title", 0)["text"]; title != "Succeeded per second (log scale)" {
		t.Errorf("title %q: a phase that commits nothing counts successes", title)
	}
}

func TestLogRangeLeavesEveryBarMostOfADecade(t *testing.T) {
	for _, c := range []struct {
		values []float64
		lo, hi float64
	}{
		{[]float64{0.95, 20}, 0.1, 100},
		{[]float64{1}, 0.1, 10},
		{[]float64{0.08, 12}, 0.01, 100},
		{[]float64{0.0015, 0.48}, 0.01, 10}, // next to nothing does not squeeze the rest
		{[]float64{0, 3000}, 0.1, 10000},
	} {
		lo, hi := LogRange(c.values...)
		if math.Abs(lo-c.lo) > 1e-12 || math.Abs(hi-c.hi) > 1e-9 {
			t.Errorf("LogRange(%v) = %g..%g, want %g..%g", c.values, lo, hi, c.lo, c.hi)
		}
	}
}

func TestTheVerdictIsAsTallAsItsRows(t *testing.T) {
	few, many := VerdictDrawing(compareRows()), VerdictDrawing(append(compareRows(), compareRows()...))
	if many.Height-few.Height != 3*rowHeight {
		t.Errorf("heights %d and %d for 3 and 6 rows: want %d px a row", few.Height, many.Height, rowHeight)
	}
	var b Builder
	c := b.Verdict(compareRows())
	if !strings.Contains(string(c.Element), `class="item" id="chart1"`) || !strings.Contains(string(c.Script), "echarts.init(document.getElementById('chart1')") {
		t.Errorf("the report's chart: %s %.200s", c.Element, c.Script)
	}
}
