//go:build labcheck

package runner

import (
	"strconv"
	"strings"
	"testing"

	"github.com/orderlab/orderlab/lab/scenario/observe"
	"github.com/orderlab/orderlab/lab/scenario/render"
	"github.com/orderlab/orderlab/lab/scenario/result"
)

// viewOf is what Postgres showed of target's run in phase i of res.
func viewOf(t *testing.T, res *result.Result, i int, target string) observe.PostgresView {
	t.Helper()
	for _, v := range res.Phases[i].Postgres {
		if v.Target == target {
			if v.Samples < 2 || v.Missed > 0 {
				t.Fatalf("phase %s, %s: %d samples of pg_stat_activity, %d missed (%s)", res.Phases[i].Name, target, v.Samples, v.Missed, v.Err)
			}
			return v
		}
	}
	t.Fatalf("phase %s: no view of Postgres for %s", res.Phases[i].Name, target)
	return observe.PostgresView{}
}

// poolOf is the DB_MAX_CONNS phase i of res ran with.
func poolOf(t *testing.T, res *result.Result, i int) int {
	t.Helper()
	n, err := strconv.Atoi(res.Phases[i].Env["DB_MAX_CONNS"])
	if err != nil {
		t.Fatalf("phase %s: DB_MAX_CONNS: %v", res.Phases[i].Name, err)
	}
	return n
}

// reportSaysWhatPostgresSaw: the Markdown report of res has the table of
// Postgres' view for every phase and names the scenario's server-side
// signal.
func reportSaysWhatPostgresSaw(t *testing.T, res *result.Result, columns ...string) {
	t.Helper()
	var b strings.Builder
	if err := render.WriteMarkdown(&b, res); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	if n := strings.Count(md, render.PostgresCaption); n != len(res.Phases) {
		t.Errorf("the report has %d tables of what Postgres saw, want one per phase (%d)", n, len(res.Phases))
	}
	for _, want := range append([]string{render.SignalLine(res.Scenario)}, columns...) {
		if want == "" || !strings.Contains(md, want) {
			t.Errorf("the report does not say %q", want)
		}
	}
}
