package catalog

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/orderlab/orderlab/lab/scenario"
)

func pool(env map[string]string) int {
	if n, err := strconv.Atoi(env["DB_MAX_CONNS"]); err == nil {
		return n
	}
	return 20
}

// Quick shrinks every catalog scenario by one factor: each pool at most 5
// (unless the scenario keeps its size), each client count divided as the
// pool is, each bound that is the pool still the pool that runs, and the
// knobs the services check against each other still consistent.
func TestQuickShrinksTheCatalogConsistently(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		q := scenario.Quick(s)
		f := q.QuickFactor
		for i, p := range q.Phases {
			if p.Load == nil {
				continue
			}
			full, quick := scenario.EnvOf(s, i), scenario.EnvOf(q, i)
			if s.QuickFactor == 0 && pool(quick) > 5 {
				t.Errorf("%s, %s: quick pool %d, want at most 5", s.Name, p.Name, pool(quick))
			}
			if want := max(1, int(math.Round(float64(s.Phases[i].Load.Concurrency)/f))); p.Load.Concurrency != want {
				t.Errorf("%s, %s: quick clients %d, want %d / %v = %d", s.Name, p.Name, p.Load.Concurrency, s.Phases[i].Load.Concurrency, f, want)
			}
			if b := s.Phases[i].Bound; b != nil && b.Concurrency == pool(full) && p.Bound.Concurrency != pool(quick) {
				t.Errorf("%s, %s: quick bound %d (%s), want the quick pool %d", s.Name, p.Name, p.Bound.Concurrency, p.Bound.What, pool(quick))
			}
			if w, err := strconv.Atoi(quick["WORKERS"]); err == nil && w > pool(quick) {
				t.Errorf("%s, %s: quick WORKERS %d above the quick pool %d", s.Name, p.Name, w, pool(quick))
			}
			if m, err := strconv.Atoi(quick["DB_MIN_CONNS"]); err == nil && m > pool(quick) {
				t.Errorf("%s, %s: quick DB_MIN_CONNS %d above the quick pool %d", s.Name, p.Name, m, pool(quick))
			}
		}
	}
}

// A quick run's texts quote the size that runs: no "2,000 clients ...
// pool 20" above a run of 500 clients on a pool of 5.
func TestQuickTextsQuoteTheQuickSize(t *testing.T) {
	s, err := Get("pool-starvation")
	if err != nil {
		t.Fatal(err)
	}
	q := scenario.Quick(s)
	if q.Title != "500 clients POST orders that hold a connection 50 ms, pool 5" {
		t.Errorf("quick title %q", q.Title)
	}
	if b := q.Phases[0].Bound; b.What != "pool 5 / 50 ms" || b.RPS() != 100 {
		t.Errorf("quick bound %q = %v/s, want pool 5 / 50 ms = 100/s", b.What, b.RPS())
	}
	for _, text := range []string{q.Question, q.Expect[0].Says} {
		if strings.Contains(text, "2,000") || strings.Contains(text, "pool of 20") {
			t.Errorf("quick text quotes the full size: %q", text)
		}
	}
	if !strings.Contains(q.Expect[0].Says, "500 clients / 100 per s = 5 s") {
		t.Errorf("quick unbounded expectation %q, want the same 5 s of queue from 500 clients and 100/s", q.Expect[0].Says)
	}
}

// againstAPhase is a term held to another phase of the same run
// (goodput>=1xopen-honor): it shrinks with it.
var againstAPhase = regexp.MustCompile(`[<>]=?\s*[0-9.]+x[a-z][a-z0-9-]*$`)

// A figure a quick run holds to is one that survives the shrink: a
// throughput stated against the bound that ran (goodput>=5xbound) or
// against another phase of the run (goodput>=1xopen-honor), never a
// full-size number that a pool of 5 cannot reach; or the expectation is
// not judged at quick size.
func TestQuickExpectationsHoldToTheQuickBound(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		for _, e := range s.Expect {
			if e.NotQuick {
				continue
			}
			for _, term := range strings.Split(e.SLO, ",") {
				term = strings.TrimSpace(term)
				if (strings.HasPrefix(term, "rps") || strings.HasPrefix(term, "goodput")) && !strings.HasSuffix(term, "xbound") && !againstAPhase.MatchString(term) {
					t.Errorf("%s, %s %s: %q is a full-size figure; state it against the bound (xbound) or mark it not_quick", s.Name, e.Target, e.Phase, term)
				}
			}
		}
	}
}
