package board

import (
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/units"
)

// knobWindow is the knob-change annotation's step: each change falls in
// exactly one (t-step, t] window of the difference below.
const knobWindow = "15s"

// knobChangeAnnotations marks every live knob change (PATCH /knobs,
// docs/reference/knobs.md) from orderlab_knob_changes_total, so that a
// change made with curl shows as well as one a scenario makes. The
// difference over one step counts each change once; a restart (the counter
// back to 0) gives a negative one, which > 0 drops.
func knobChangeAnnotations() *dashboard.AnnotationQueryBuilder {
	total := sel("orderlab_knob_changes_total")
	return dashboard.NewAnnotationQueryBuilder().
		Name("Knob changes").
		Datasource(promDS()).
		Enable(true).
		IconColor("orange").
		Expr(sumBy("job, knob", total+" - "+total+" offset "+knobWindow) + " > 0").
		Step(knobWindow).
		TitleFormat("{{knob}} changed").
		TextFormat("{{job}}: {{knob}} changed (GET /knobs on its admin port shows the value)").
		TagKeys("job,knob")
}

// knobPanels are the row "Knobs": the numeric knobs in force. The panels
// that draw a bound (pool size, limit, workers, queue capacity) draw it
// from the parts' own gauges, which follow a live change.
func knobPanels() []cog.Builder[dashboard.Panel] {
	return []cog.Builder[dashboard.Panel]{
		repeatPerService(series("Knobs in force: $service", units.Short, 24,
			"Every numeric knob of the service as it is now (orderlab_knob_value; durations in seconds, booleans 0/1; LIMIT=adaptive has no value, see the limiter's limit). A step is a live change (PATCH /knobs, docs/reference/knobs.md), marked by the orange annotations.",
			query(sumBy("knob", sel("orderlab_knob_value")), "{{knob}}"),
		)),
	}
}
