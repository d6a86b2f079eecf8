package apptest

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orderlab/orderlab/internal/ledger"
	"github.com/orderlab/orderlab/internal/poll"
	"github.com/orderlab/orderlab/services/internal/app"
)

// KnobChange is one step of LiveKnobsUnderLoad: the PATCH, and the
// metric that draws the bound it moves, with the value it must show.
type KnobChange struct {
	Knobs  map[string]string
	Metric string
	Match  map[string]string // the metric's labels, if it needs some
	Want   float64
}

// knobToken is the ADMIN_TOKEN of LiveKnobsUnderLoad's service.
const knobToken = "reliability-token"

// LiveKnobsUnderLoad is the live-knob reliability run
// (docs/reference/knobs.md): svc with a pool of 20 (and env) under 100
// keyed orders a second, with changes applied 2 s apart. Every answer
// must be a success or a 429 with Retry-After; the table must back every
// answer (ledger.Check: nothing acknowledged missing, nothing stored
// twice); each change must reach the bound it moves; afterwards the pool
// holds only live sessions of one pool, every connection works and the
// goroutines are back to their baseline (the package's goleak TestMain
// checks the rest once the service stopped).
func LiveKnobsUnderLoad(t *testing.T, svc app.Service, env map[string]string, changes []KnobChange) {
	vars := map[string]string{"DB_MAX_CONNS": "20", "ADMIN_TOKEN": knobToken, "LOG_LEVEL": "info"}
	for k, v := range env {
		vars[k] = v
	}
	inst := Start(t, svc, vars)
	// Every connection open first, as after the run (checkRecovered), so
	// that the goroutine baselines compare.
	useEveryConnection(t, inst, 20)
	baseline := inst.Metrics().Value("go_goroutines", nil)
	const gap = 2 * time.Second

	start := time.Now()
	load := ledger.Start(inst.URL+"/orders", "knobs-"+svc.Model, 100, 0)
	for _, c := range changes {
		time.Sleep(gap)
		r := inst.PatchKnobs(knobToken, c.Knobs)
		if r.Status != http.StatusOK {
			t.Errorf("PATCH %v = %d %s", c.Knobs, r.Status, r.Body)
			continue
		}
		// The bound follows at once: a new pool, limiter or pipeline
		// takes the new requests while the old one drains.
		poll.Until(t, 10*time.Second, fmt.Sprintf("%s to follow %v", c.Metric, c.Knobs), func() error {
			if got := inst.Metrics().Value(c.Metric, c.Match); got != c.Want {
				return fmt.Errorf("%s = %v, want %v", c.Metric, got, c.Want)
			}
			return nil
		})
	}
	time.Sleep(gap)
	as := load.Finish()
	t.Logf("%d changes under %d orders in %s", len(changes), len(as), time.Since(start).Round(100*time.Millisecond))

	bad := 0
	for _, a := range as {
		ok := a.Status/100 == 2 || (a.Status == http.StatusTooManyRequests && retryAfterSeconds(a.RetryAfter))
		if !ok {
			if bad++; bad <= 5 {
				t.Errorf("answer not allowed while knobs change: %s (Retry-After %q)", a, a.RetryAfter)
			}
		}
	}
	if bad > 5 {
		t.Errorf("... %d answers not allowed in all", bad)
	}
	if bad > 0 {
		for _, l := range strings.Split(inst.Log.String(), "\n") {
			if strings.Contains(l, `"level":"ERROR"`) || strings.Contains(l, `"level":"WARN"`) {
				t.Log(l)
			}
		}
	}
	t.Logf("answers: %v", ledger.Count(as))
	au, err := ledger.Check(context.Background(), inst.DB, as)
	if err != nil {
		t.Fatal(err)
	}
	if !au.OK() {
		t.Errorf("the table does not back the answers: %d acknowledged missing, %d stored twice, %d stored though answered not stored",
			len(au.Missing), len(au.Duplicates), len(au.Stored))
	}
	if v := inst.Metrics().Value("orderlab_knob_changes_total", nil); int(v) < len(changes) {
		t.Errorf("orderlab_knob_changes_total = %v after %d changes", v, len(changes))
	}
	checkRecovered(t, inst, baseline, 20, "orderlab-"+svc.Model)
}

func retryAfterSeconds(v string) bool {
	n, err := strconv.Atoi(v)
	return err == nil && n > 0
}
