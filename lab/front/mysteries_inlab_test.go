//go:build labcheck

package front

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/orderlab/orderlab/lab/front/api"
	"github.com/orderlab/orderlab/lab/front/mystery"
	"github.com/orderlab/orderlab/lab/scenario"
)

// TestEveryMysteryRunsQuickFromThePage: each pitfall a mystery can run,
// drawn alone (POST /api/mysteries with among) so that no pitfall is left
// to a random draw, runs quick against the three services behind the
// lab's database proxy to its end; nothing the API answers before the
// answer names it or the knobs it turns; the answer reveals it, with the
// load and the settings drawn; and the knobs are back at the end.
func TestEveryMysteryRunsQuickFromThePage(t *testing.T) {
	all, _ := inLabScenarios(t)
	f := startFixture(t, fixtureConfig{services: scenario.Services, catalog: all, proxy: true})
	before := map[string]map[string]string{}
	for _, svc := range scenario.Services {
		before[svc] = f.knobs(svc)
	}
	for _, p := range mystery.Pitfalls() {
		var m mystery.Mystery
		code, started := f.call("POST", "/api/mysteries", map[string]any{"quick": true, "by": "test", "among": []string{p}}, &m)
		if code != http.StatusAccepted {
			t.Errorf("%s: start: %d %s", p, code, started)
			continue
		}
		said := []string{started}
		run := f.waitRunWithin(m.ID, 4*time.Minute, p+"'s mystery's end", func(r api.Run) error {
			if b, err := json.Marshal(r); err == nil {
				said = append(said, string(b)) // the run as it runs, too
			}
			if r.EndedAt == nil {
				return fmt.Errorf("state %s, phase %+v", r.State, r.Phase)
			}
			return nil
		})
		for _, path := range []string{fmt.Sprintf("/api/runs/%d", m.ID), fmt.Sprintf("/api/mysteries/%d", m.ID)} {
			_, body := f.call("GET", path, nil, nil)
			said = append(said, body)
		}
		// The list's entry of this run (the earlier mysteries in it are
		// answered, and show what they ran).
		var list struct{ Runs []json.RawMessage }
		f.call("GET", "/api/runs", nil, &list)
		for _, r := range list.Runs {
			var entry struct{ ID int }
			if json.Unmarshal(r, &entry) == nil && entry.ID == m.ID {
				said = append(said, string(r))
			}
		}
		if !slices.ContainsFunc(list.Runs, func(r json.RawMessage) bool {
			var entry struct{ ID int }
			return json.Unmarshal(r, &entry) == nil && entry.ID == m.ID
		}) {
			t.Errorf("%s: GET /api/runs does not list run %d", p, m.ID)
		}
		var got mystery.Mystery
		if code, body := f.call("POST", fmt.Sprintf("/api/mysteries/%d/answer", m.ID), map[string]string{"pitfall": p}, &got); code != http.StatusOK || got.Reveal == nil {
			t.Errorf("%s: answer: %d %s", p, code, body)
			continue
		}
		ran := got.Reveal.Ran
		t.Logf("%s: %s; load %v; drawn %+v", p, run.State, ran.Load, ran.Settings)
		if run.State != api.StateDone {
			_, body := f.call("GET", fmt.Sprintf("/api/runs/%d", m.ID), nil, &run)
			t.Errorf("%s: the mystery's run is %s, want it done; after the answer: %.2000s", p, run.State, body)
		}
		if ran.Pitfall != p || !got.Reveal.Correct || len(ran.Load) != 1 || len(ran.Settings) == 0 || len(ran.Knobs) == 0 {
			t.Errorf("%s: reveal %+v", p, got.Reveal)
		}
		for i, b := range said {
			// The board's address (every mystery's the same) is named for
			// the first pitfall of the catalog.
			text := strings.ReplaceAll(withoutChoices(t, b), "/d/orderlab-pool-starvation", "/d/the-board")
			var tell []string
			for _, name := range append([]string{p}, slices.Collect(maps.Keys(ran.Knobs))...) {
				if strings.Contains(text, name) {
					tell = append(tell, name)
				}
			}
			if tell != nil {
				t.Errorf("%s: answer %d before the reveal names %v:\n%.2000s", p, i, tell, b)
			}
		}
	}
	for _, svc := range scenario.Services {
		if got := f.knobs(svc); !maps.Equal(got, before[svc]) {
			t.Errorf("%s's knobs after every mystery: %v, want them back at %v", svc, got, before[svc])
		}
	}
}
