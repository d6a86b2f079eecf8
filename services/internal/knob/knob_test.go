package knob

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func env(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }

// Every knob is either live or says why it needs a restart, and means
// something; its default lies in its range unless the table spells it.
func TestDeclarations(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range All {
		if seen[k.Name] {
			t.Errorf("%s declared twice", k.Name)
		}
		seen[k.Name] = true
		if k.Live == (k.Restart != "") {
			t.Errorf("%s: want either Live or a Restart reason", k.Name)
		}
		if k.Meaning == "" {
			t.Errorf("%s: no meaning", k.Name)
		}
		if k.DefaultFrom != "" {
			if _, ok := Lookup(k.DefaultFrom); !ok {
				t.Errorf("%s: default from unknown %s", k.Name, k.DefaultFrom)
			}
			continue
		}
		if k.DefaultText == "" && k.Default != "" {
			if _, err := k.Parse(k.Default); err != nil {
				t.Errorf("%s: default %q: %v", k.Name, k.Default, err)
			}
		}
	}
}

func TestFromEnvReportsEveryBadVariable(t *testing.T) {
	_, err := FromEnv("semaphore", env(map[string]string{
		"DB_MAX_CONNS": "lots", "REQUEST_TIMEOUT": "-1s", "LIMIT": "some", "REQUEST_BUFFER_POOL": "yes",
		"LIMIT_MIN": "9", "LIMIT_MAX": "3", "DATABASE_URL": "postgres://u:s3cret@h/d",
		"WORKERS": "oops", // a pipeline knob: the semaphore model does not read it
	}))
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		`DB_MAX_CONNS="lots": want an integer from 1 to 10000`,
		`REQUEST_TIMEOUT="-1s": want a duration from 1ms to 10m0s, such as 100ms`,
		`LIMIT="some": want an integer from 1 to 100000, or adaptive`,
		`REQUEST_BUFFER_POOL="yes": want true or false`,
		`LIMIT_MIN="9": LIMIT_MIN (9) must be at most LIMIT_MAX (3)`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "WORKERS") || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("error names what it should not:\n%v", err)
	}
}

func TestFromEnvDefaultsAndSources(t *testing.T) {
	s, err := FromEnv("pipeline", env(map[string]string{"DB_MAX_CONNS": " 7 ", "ADMIN_TOKEN": "tok"}))
	if err != nil {
		t.Fatal(err)
	}
	if v, src, _ := s.Get("DB_MAX_CONNS"); v.Int != 7 || v.Text != "7" || src != FromEnvironment {
		t.Errorf("DB_MAX_CONNS = %+v from %s", v, src)
	}
	if v, src, _ := s.Get("WORKERS"); v.Int != 7 || src != FromDefault {
		t.Errorf("WORKERS = %+v from %s, want DB_MAX_CONNS's 7 by default", v, src)
	}
	if s.Duration("REQUEST_TIMEOUT") != 30*time.Second || s.Bool("REQUEST_BUFFER_POOL") || s.Text("HTTP_SERVER") != "net/http" {
		t.Errorf("defaults: %v", s.LogAttrs())
	}
	if _, _, ok := s.Get("LIMIT"); ok {
		t.Error("the pipeline set has LIMIT, a semaphore knob")
	}
	logged := ""
	attrs := s.LogAttrs()
	for i := 0; i < len(attrs); i += 2 {
		logged += attrs[i].(string) + "=" + attrs[i+1].(string) + " "
	}
	if strings.Contains(logged, "tok ") || !strings.Contains(logged, "ADMIN_TOKEN=set") {
		t.Errorf("the token shows: %s", logged)
	}
}

// A change is all or nothing, and its error names every knob at fault.
func TestWith(t *testing.T) {
	s, err := FromEnv("semaphore", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = s.With(map[string]string{"DB_MAX_CONNS": "5", "LIMIT_WAIT": "forever", "HTTP_SERVER": "nbio", "NOPE": "1", "WORKERS": "3"})
	var ce *ChangeError
	if !errors.As(err, &ce) {
		t.Fatalf("With = %v, want a *ChangeError", err)
	}
	if strings.Join(ce.Unknown, ",") != "NOPE,WORKERS" || strings.Join(ce.Restart, ",") != "HTTP_SERVER" ||
		len(ce.Invalid) != 1 || ce.Invalid[0].Knob != "LIMIT_WAIT" {
		t.Errorf("ChangeError = %+v", ce)
	}
	if s.Int("DB_MAX_CONNS") != 20 {
		t.Error("a refused change changed the set")
	}

	// A rule between knobs names the changed one.
	_, _, err = s.With(map[string]string{"DB_MAX_CONNS": "5", "DB_MIN_CONNS": "5", "LIMIT_MAX": "0"})
	if !errors.As(err, &ce) || len(ce.Invalid) != 1 || ce.Invalid[0].Knob != "LIMIT_MAX" {
		t.Errorf("With = %v", err)
	}
	_, _, err = s.With(map[string]string{"DB_MAX_CONNS": "2", "DB_MIN_CONNS": "3"})
	if !errors.As(err, &ce) || len(ce.Invalid) != 1 || !strings.Contains(ce.Invalid[0].Error(), "DB_MIN_CONNS (3) must be at most DB_MAX_CONNS (2)") {
		t.Errorf("With = %v", err)
	}

	next, changed, err := s.With(map[string]string{"LIMIT": "adaptive", "LIMIT_WAIT": "100ms", "DB_DELAY": "5ms"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(changed, ",") != "DB_DELAY,LIMIT" || !next.Word("LIMIT") || next.Duration("DB_DELAY") != 5*time.Millisecond {
		t.Errorf("changed %v, next %v", changed, next.LogAttrs())
	}
	if _, src, _ := next.Get("LIMIT_WAIT"); src != FromRuntime {
		t.Errorf("LIMIT_WAIT from %s, want runtime", src)
	}
	if _, ok := mustKnob(t, "LIMIT").Numeric(mustValue(next, "LIMIT")); ok {
		t.Error("LIMIT=adaptive has a number")
	}
}

func TestShowMasks(t *testing.T) {
	k := mustKnob(t, "DATABASE_URL")
	v, _ := k.Parse("postgres://app:s3cret@db:5432/orders")
	if got := k.Show(v); strings.Contains(got, "s3cret") || !strings.Contains(got, "host=db") {
		t.Errorf("Show = %q", got)
	}
}

func mustKnob(t *testing.T, name string) Knob {
	k, ok := Lookup(name)
	if !ok {
		t.Fatalf("no knob %s", name)
	}
	return k
}

func mustValue(s *Set, name string) Value { v, _, _ := s.Get(name); return v }

// A knob that defaults to DB_MAX_CONNS follows it live until it is set, so
// a pool change is never refused for a knob nobody set; "" puts a knob back
// as the service started, following again.
func TestDependentKnobsFollowThePool(t *testing.T) {
	s, err := FromEnv("pipeline", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	small, changed, err := s.With(map[string]string{"DB_MAX_CONNS": "5"})
	if err != nil {
		t.Fatalf("DB_MAX_CONNS=5 with WORKERS unset: %v", err)
	}
	if small.Int("WORKERS") != 5 || strings.Join(changed, ",") != "DB_MAX_CONNS,WORKERS" {
		t.Errorf("WORKERS %d, changed %v; want 5 and both named", small.Int("WORKERS"), changed)
	}
	if _, src, _ := small.Get("WORKERS"); src != FromDefault {
		t.Errorf("a following WORKERS is from %s, want default", src)
	}

	// Set explicitly, it no longer follows, and the rule holds it.
	two, _, err := small.With(map[string]string{"WORKERS": "2"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := two.With(map[string]string{"DB_MAX_CONNS": "1"}); err == nil ||
		!strings.Contains(err.Error(), "WORKERS (2) must be at most DB_MAX_CONNS (1)") {
		t.Errorf("DB_MAX_CONNS=1 under WORKERS=2: %v, want the rule's reason", err)
	}
	wide, _, err := two.With(map[string]string{"DB_MAX_CONNS": "30"})
	if err != nil || wide.Int("WORKERS") != 2 {
		t.Fatalf("a set WORKERS moved with the pool: %d, %v", wide.Int("WORKERS"), err)
	}

	// "" puts both back as at start: WORKERS follows the pool again.
	back, changed, err := wide.With(map[string]string{"DB_MAX_CONNS": "", "WORKERS": ""})
	if err != nil {
		t.Fatal(err)
	}
	if back.Int("DB_MAX_CONNS") != 20 || back.Int("WORKERS") != 20 || strings.Join(changed, ",") != "DB_MAX_CONNS,WORKERS" {
		t.Errorf("after reset: pool %d, workers %d, changed %v", back.Int("DB_MAX_CONNS"), back.Int("WORKERS"), changed)
	}
	if _, src, _ := back.Get("WORKERS"); src != FromDefault {
		t.Errorf("reset WORKERS from %s, want default", src)
	}
	if again, _, err := back.With(map[string]string{"DB_MAX_CONNS": "3"}); err != nil || again.Int("WORKERS") != 3 {
		t.Errorf("after reset WORKERS no longer follows: %v", err)
	}

	// A value set in the environment is what "" goes back to, and the rule
	// still refuses a pool below it: the user chose it.
	fixed, err := FromEnv("pipeline", env(map[string]string{"WORKERS": "8"}))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := fixed.With(map[string]string{"DB_MAX_CONNS": "5"}); err == nil ||
		!strings.Contains(err.Error(), "WORKERS (8) must be at most DB_MAX_CONNS (5)") {
		t.Errorf("an explicit WORKERS=8 under a pool of 5: %v, want refused", err)
	}
	moved, _, _ := fixed.With(map[string]string{"WORKERS": "4"})
	if reset, _, err := moved.With(map[string]string{"WORKERS": ""}); err != nil || reset.Int("WORKERS") != 8 {
		t.Errorf(`WORKERS="" after an environment 8: %v`, err)
	} else if _, src, _ := reset.Get("WORKERS"); src != FromEnvironment {
		t.Errorf("reset to the environment's value from %s", src)
	}

	// LIMIT follows as well; LIMIT=adaptive is set and does not.
	sem, err := FromEnv("semaphore", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if n, _, err := sem.With(map[string]string{"DB_MAX_CONNS": "5"}); err != nil || n.Int("LIMIT") != 5 {
		t.Errorf("LIMIT did not follow the pool: %v", err)
	}
	ad, _, _ := sem.With(map[string]string{"LIMIT": "adaptive"})
	if n, _, err := ad.With(map[string]string{"DB_MAX_CONNS": "5"}); err != nil || !n.Word("LIMIT") {
		t.Errorf("LIMIT=adaptive moved with the pool: %v", err)
	}
}
