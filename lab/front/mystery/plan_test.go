package mystery

import (
	"maps"
	"math/rand/v2"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/orderlab/orderlab/lab/scenario"
	"github.com/orderlab/orderlab/lab/scenario/catalog"
)

// TestDrawStaysWithinTheRanges: from seeded sources, every draw is one of
// the recipes, each dial within its range and applied to the scenario that
// runs, which the lab can run and which names no pitfall; over the draws
// every recipe comes up and every dial takes values other than the
// catalog's. The same seed draws the same mystery.
func TestDrawStaysWithinTheRanges(t *testing.T) {
	all, err := catalog.All()
	if err != nil {
		t.Fatal(err)
	}
	byName := func(name string) (scenario.Scenario, bool) {
		i := slices.IndexFunc(all, func(s scenario.Scenario) bool { return s.Name == name })
		if i < 0 {
			return scenario.Scenario{}, false
		}
		return all[i], true
	}
	drawn := map[string]int{}
	offCatalog := map[string]bool{} // pitfall/dial: a value the catalog does not use
	for seed := range uint64(400) {
		pl, err := draw(rand.New(rand.NewPCG(seed, 1)), recipes, byName)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		again, _ := draw(rand.New(rand.NewPCG(seed, 1)), recipes, byName)
		if !reflect.DeepEqual(again.Settings, pl.Settings) || again.Recipe.Pitfall != pl.Recipe.Pitfall {
			t.Fatalf("seed %d drew %s %v, then %s %v", seed, pl.Recipe.Pitfall, pl.Settings, again.Recipe.Pitfall, again.Settings)
		}
		name := pl.Recipe.Pitfall
		drawn[name]++
		sc := pl.Scenario
		if ok, why := scenario.InLab(sc); !ok {
			t.Errorf("seed %d, %s: the lab cannot run it: %s", seed, name, why)
		}
		p := sc.Phases[0]
		for _, text := range []string{sc.Name, sc.Title, sc.Question, sc.Reproduces, sc.Kind, p.Name, p.Note} {
			if strings.Contains(text, name) {
				t.Errorf("seed %d: %q names the pitfall %s", seed, text, name)
			}
		}
		if len(sc.Phases) != 1 || p.Bound != nil || p.Continue || len(sc.Expect) != 0 {
			t.Errorf("seed %d, %s: %d phases, bound %v, continue %v, %d expectations: want one phase of its own", seed, name, len(sc.Phases), p.Bound, p.Continue, len(sc.Expect))
		}
		if len(pl.Settings) != len(pl.Recipe.Dials) {
			t.Fatalf("seed %d, %s: %d settings for %d dials", seed, name, len(pl.Settings), len(pl.Recipe.Dials))
		}
		q := mustQuery(t, p.Request.Path)
		for i, d := range pl.Recipe.Dials {
			set := pl.Settings[i]
			n, err := strconv.Atoi(strings.TrimSuffix(set.Value, d.Unit))
			if err != nil || n < d.Min || n > d.Max {
				t.Errorf("seed %d, %s: %s = %q, want %d to %d %s", seed, name, d.Name, set.Value, d.Min, d.Max, d.Unit)
			}
			if set.Value != set.Catalog {
				offCatalog[name+"/"+d.Name] = true
			}
			if got := applied(t, sc, p, q, d); got != n {
				t.Errorf("seed %d, %s: %s drawn %d, the scenario runs %d", seed, name, d.Name, n, got)
			}
			for _, k := range d.Also {
				if sc.Env[k] != sc.Env[d.Name] {
					t.Errorf("seed %d, %s: %s=%s, want it to follow %s=%s", seed, name, k, sc.Env[k], d.Name, sc.Env[d.Name])
				}
			}
		}
	}
	for _, r := range recipes {
		if drawn[r.Pitfall] == 0 {
			t.Errorf("%s never drawn in 400 draws", r.Pitfall)
		}
		for _, d := range r.Dials {
			if !offCatalog[r.Pitfall+"/"+d.Name] {
				t.Errorf("%s: %s never drawn off the catalog's value", r.Pitfall, d.Name)
			}
		}
	}
}

// applied is the value the scenario runs for dial d, in d's unit.
func applied(t *testing.T, sc scenario.Scenario, p scenario.Phase, q url.Values, d dial) int {
	t.Helper()
	num := func(s, unit string) int {
		n, err := strconv.Atoi(strings.TrimSuffix(s, unit))
		if err != nil {
			t.Fatalf("%s: %q is not a number of %s", d.Name, s, unit)
		}
		return n
	}
	switch d.Kind {
	case knobDial:
		if d.Unit == "KiB" {
			return num(sc.Env[d.Name], "") / 1024
		}
		return num(sc.Env[d.Name], d.Unit)
	case paramDial:
		return num(q.Get(d.Name), d.Unit)
	case loadDial:
		switch d.Name {
		case "rate":
			return int(p.Load.Rate)
		case "concurrency":
			return p.Load.Concurrency
		case "retries":
			return p.Load.Retries
		case "duration":
			return int(p.Load.Duration.D().Seconds())
		}
	case latencyDial:
		return int(p.DBLatency.D().Milliseconds())
	case stopAfterDial:
		return int(p.DBStop.After.D().Seconds())
	case stopForDial:
		return int(p.DBStop.For.D().Seconds())
	}
	t.Fatalf("dial %s: kind %d not checked", d.Name, d.Kind)
	return 0
}

func mustQuery(t *testing.T, path string) url.Values {
	t.Helper()
	u, err := url.Parse(path)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query()
}

// TestTheAnswersAreThePitfallsTheAlertsName: the answers a mystery offers
// are exactly the pitfall labels of prometheus/rules/pitfalls.yml, and
// each is run by a recipe or said not to be.
func TestTheAnswersAreThePitfallsTheAlertsName(t *testing.T) {
	data, err := os.ReadFile("../../../prometheus/rules/pitfalls.yml")
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s+pitfall: (\S+)$`).FindAllStringSubmatch(string(data), -1) {
		named[m[1]] = true
	}
	all, err := catalog.All()
	if err != nil {
		t.Fatal(err)
	}
	srv := &Server{cfg: Config{Catalog: all}}
	offered := map[string]bool{}
	for _, c := range srv.choices() {
		offered[c.Pitfall] = true
		if c.Title == "" {
			t.Errorf("%s: no title", c.Pitfall)
		}
	}
	if len(named) < 13 || !maps.Equal(named, offered) {
		t.Errorf("answers %v, want the rules' pitfalls %v", slices.Sorted(maps.Keys(offered)), slices.Sorted(maps.Keys(named)))
	}
	for _, r := range recipes {
		if slices.Contains(notRun, r.Pitfall) {
			t.Errorf("%s has a recipe and is said to have none", r.Pitfall)
		}
	}
}

// TestAmongNarrowsTheDraw: among keeps the candidates of the pitfalls
// named, all of them when none is, and refuses, naming it, a pitfall no
// candidate runs (one the lab cannot run, or none a mystery runs).
func TestAmongNarrowsTheDraw(t *testing.T) {
	if got, err := among(recipes, nil); err != nil || len(got) != len(recipes) {
		t.Errorf("among nothing: %d candidates, %v; want all %d", len(got), err, len(recipes))
	}
	got, err := among(recipes, []string{"db-restart", "connection-leak"})
	if err != nil || len(got) != 2 || got[0].Pitfall != "db-restart" || got[1].Pitfall != "connection-leak" {
		t.Errorf("among two: %+v, %v", got, err)
	}
	noProxy := slices.DeleteFunc(slices.Clone(recipes), func(r recipe) bool { return r.Pitfall == "db-restart" })
	for _, names := range [][]string{{"db-restart"}, {"connection-leak", "too-many-clients"}, {"gremlins"}} {
		if got, err := among(noProxy, names); err == nil || !strings.Contains(err.Error(), names[len(names)-1]) {
			t.Errorf("among %v without db-restart's candidate: %+v, %v; want an error naming %s", names, got, err, names[len(names)-1])
		}
	}
}
