package scenario

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestResolveSLOStatesTermsAgainstTheBound(t *testing.T) {
	got, err := ResolveSLO("p99<500ms, goodput>=0.85xbound,rps>=5xbound", 100)
	if err != nil || got != "p99<500ms,goodput>=85,rps>=500" {
		t.Errorf("resolved %q (%v), want p99<500ms,goodput>=85,rps>=500", got, err)
	}
	for _, bad := range []string{"p99<0.5xbound", "goodput>=xbound", "rps>=-1xbound"} {
		if _, err := ResolveSLO(bad, 100); err == nil {
			t.Errorf("%q: resolved, want an error", bad)
		}
	}
	if _, err := ResolveSLO("rps>=5xbound", 0); err == nil || !strings.Contains(err.Error(), "no bound") {
		t.Errorf("no bound: %v, want the phase's missing bound named", err)
	}
}

// A term against the bound needs a phase with one.
func TestValidateWantsABoundForATermAgainstIt(t *testing.T) {
	text := strings.Replace(valid, `slo: "p99<250ms"`, `slo: "goodput>=0.9xbound"`, 1)
	if _, err := Parse([]byte(text)); err != nil {
		t.Fatalf("with a bound: %v", err)
	}
	text = strings.Replace(text, "    bound: {concurrency: 20, hold: 20ms, what: pool}\n", "", 1)
	if _, err := Parse([]byte(text)); err == nil || !strings.Contains(err.Error(), "no bound") {
		t.Errorf("without a bound: %v, want an error", err)
	}
}

// boundKnobs are what the bound of phase i of s can be: a knob
// (DB_MAX_CONNS by default 20), the load's clients, or what the scenario's
// own cluster allows (the role's connection limit, the replicas' pools
// together, PgBouncer's pool).
func boundKnobs(s Scenario, i int) map[string]int {
	p, env := s.Phases[i], EnvOf(s, i)
	out := map[string]int{"DB_MAX_CONNS": defaultPool, "clients": p.Load.Concurrency}
	for _, k := range []string{"DB_MAX_CONNS", "LIMIT", "WORKERS"} {
		if n, err := strconv.Atoi(env[k]); err == nil {
			out[k] = n
		}
	}
	if c := s.Cluster; c != nil {
		if c.Role != nil {
			out["the role's connection limit"] = c.Role.ConnectionLimit
		}
		if c.Replicas > 1 {
			out["replicas x DB_MAX_CONNS"] = c.Replicas * out["DB_MAX_CONNS"]
		}
		if c.PgBouncer != nil && p.PgBouncer {
			out["PgBouncer's pool"] = c.PgBouncer.Pool
		}
	}
	return out
}

// TestQuickExpectationsHoldToTheBoundOfTheQuickKnobs: in every catalog
// scenario, run quick, every phase's bound is the one the quick run's own
// knobs give (the knob or the client count the full bound is, as the quick
// run sets it, over the same hold), and every expectation stated against
// the bound is held, for each target and phase it applies to, to that
// quick bound (SLOOf, as the runner resolves it).
func TestQuickExpectationsHoldToTheBoundOfTheQuickKnobs(t *testing.T) {
	files, err := filepath.Glob("catalog/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no catalog scenario (%v)", err)
	}
	held := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s, err := Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		q := Quick(s)
		for i, p := range q.Phases {
			if p.Load == nil {
				continue
			}
			bound := 0.0
			if b := s.Phases[i].Bound; b != nil {
				full, quick := boundKnobs(s, i), boundKnobs(q, i)
				var is []string
				for k, n := range full {
					if n == b.Concurrency {
						is = append(is, k)
					}
				}
				if len(is) == 0 {
					t.Errorf("%s, %s: bound %d (%s) is none of %v: cannot tell what a quick run makes of it", s.Name, p.Name, b.Concurrency, b.What, full)
					continue
				}
				for _, k := range is {
					if quick[k] != p.Bound.Concurrency || p.Bound.Hold != b.Hold {
						t.Errorf("%s, %s: quick bound %d / %s (%s), want %s as the quick run sets it, %d, over the same %s",
							s.Name, p.Name, p.Bound.Concurrency, p.Bound.Hold.D(), p.Bound.What, k, quick[k], b.Hold.D())
					}
				}
				bound = float64(quick[is[0]]) / b.Hold.D().Seconds()
			}
			for _, target := range q.Targets {
				slo, err := SLOOf(q, true, p, target)
				if err != nil {
					t.Errorf("%s, %s, %s: %v", s.Name, p.Name, target, err)
					continue
				}
				terms := strings.Split(slo, ",")
				for _, e := range q.Expect {
					if !Judged(e, true) || (e.Target != "" && e.Target != target) || (e.Phase != "" && e.Phase != p.Name) {
						continue
					}
					for _, term := range strings.Split(e.SLO, ",") {
						share, ok, err := Relative(term)
						if err != nil || !ok {
							continue
						}
						head := strings.TrimSuffix(strings.TrimSpace(term), xbound)
						want := head[:strings.LastIndexAny(head, "<>=")+1] + strconv.FormatFloat(share*bound, 'f', -1, 64)
						if !slices.Contains(terms, want) {
							t.Errorf("%s, %s, %s: quick SLO %q, want %s (%s at the quick bound %.0f/s)", s.Name, p.Name, target, slo, want, strings.TrimSpace(term), bound)
						}
						held++
					}
				}
			}
		}
	}
	if held == 0 {
		t.Error("no catalog expectation is stated against the bound: the test holds nothing")
	}
}
