package front

import (
	"net/http"
	"testing"

	"github.com/orderlab/orderlab/lab/knobs"
)

func TestKnobsBackgroundAndResetGoThroughTheServices(t *testing.T) {
	f := newFixture(t)
	var all map[string]struct {
		Knobs map[string]struct {
			Value, Default, Range string
			Live                  bool
		}
		Error string
	}
	if code, body := f.call("GET", "/api/knobs", nil, &all); code != http.StatusOK || all["semaphore"].Knobs["LIMIT_WAIT"].Range == "" ||
		all["semaphore"].Knobs["ADMIN_TOKEN"].Value != "set" {
		t.Fatalf("GET /api/knobs: %d %.300s", code, body)
	}
	if code, body := f.call("PATCH", "/api/knobs/semaphore", map[string]string{"LIMIT_WAIT": "20ms", "DB_DELAY": "1ms"}, nil); code != http.StatusOK {
		t.Fatalf("PATCH: %d %s", code, body)
	}
	if got := f.knobs("semaphore"); got["LIMIT_WAIT"] != "20ms" || got["DB_DELAY"] != "1ms" {
		t.Errorf("semaphore's knobs after the PATCH: %v", got)
	}
	var reset struct{ Changed map[string]map[string]string }
	if code, body := f.call("POST", "/api/knobs/reset", nil, &reset); code != http.StatusOK {
		t.Fatalf("reset: %d %s", code, body)
	}
	// The services ran with DB_MAX_CONNS=4 and SHUTDOWN_TIMEOUT=2s: those
	// stay as the services started, the two changed go back to their
	// defaults, and LIMIT (unset) follows DB_MAX_CONNS.
	want := map[string]string{"LIMIT_WAIT": "100ms", "DB_DELAY": "0s", "DB_MAX_CONNS": "4", "SHUTDOWN_TIMEOUT": "2s", "LIMIT": "4"}
	got := f.knobs("semaphore")
	for k, v := range want {
		if !knobs.Same(got[k], v) {
			t.Errorf("semaphore %s after the reset: %q, want %q as at start (reset changed %v)", k, got[k], v, reset.Changed)
		}
	}
	if ch := reset.Changed["semaphore"]; len(ch) != 2 || !knobs.Same(ch["LIMIT_WAIT"], "100ms") || !knobs.Same(ch["DB_DELAY"], "0s") {
		t.Errorf("reset answered %v, want LIMIT_WAIT and DB_DELAY with the values they went back to", ch)
	}
	var again struct{ Changed map[string]map[string]string }
	if f.call("POST", "/api/knobs/reset", nil, &again); len(again.Changed["semaphore"])+len(again.Changed["unbounded"]) != 0 {
		t.Errorf("a second reset changed %v, want nothing", again.Changed)
	}

	var rates map[string]float64
	if code, body := f.call("GET", "/api/background", nil, &rates); code != http.StatusOK || rates["semaphore"] != 4 {
		t.Fatalf("GET /api/background: %d %s", code, body)
	}
	if code, body := f.call("PUT", "/api/background", map[string]float64{"semaphore": 0}, &rates); code != http.StatusOK || rates["semaphore"] != 0 {
		t.Fatalf("PUT /api/background: %d %s", code, body)
	}
	if got := f.rates.All(); got["semaphore"] != 0 || got["unbounded"] != 4 {
		t.Errorf("background rates after PUT {semaphore: 0}: %v", got)
	}
}
