package apptest

import (
	"encoding/json"
	"net/http"
	"strings"
)

// KnobView is one knob as GET /knobs shows it.
type KnobView struct {
	Value, Default, Range, Unit, Restart, Source, Meaning string
	Live                                                  bool
}

// Knobs reads GET /knobs on the admin listener.
func (i *Instance) Knobs() map[string]KnobView {
	i.t.Helper()
	r := i.Admin(http.MethodGet, "/knobs", "", "")
	if r.Status != http.StatusOK {
		i.t.Fatalf("GET /knobs = %d %s", r.Status, r.Body)
	}
	var ks map[string]KnobView
	r.JSON(i.t, &ks)
	return ks
}

// PatchKnobs sends changes to PATCH /knobs with token as the bearer
// token (none when empty).
func (i *Instance) PatchKnobs(token string, changes map[string]string) Response {
	i.t.Helper()
	b, err := json.Marshal(changes)
	if err != nil {
		i.t.Fatal(err)
	}
	return i.Admin(http.MethodPatch, "/knobs", token, string(b))
}

// Admin sends a request to the admin listener; it fails the test on a
// transport error.
func (i *Instance) Admin(method, path, token, body string) Response {
	i.t.Helper()
	req, err := http.NewRequest(method, i.AdminURL+path, strings.NewReader(body))
	if err != nil {
		i.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	r, err := i.Send(req)
	if err != nil {
		i.t.Fatalf("%s %s: %v", method, path, err)
	}
	return r
}
