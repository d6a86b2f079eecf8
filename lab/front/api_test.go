package front

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/orderlab/orderlab/lab/front/api"
	"github.com/orderlab/orderlab/lab/scenario/catalog"
)

func TestBadInputIsRefusedAndChangesNothing(t *testing.T) {
	f := newFixture(t)
	before := f.knobs("semaphore")
	for _, tc := range []struct {
		method, path string
		body         any
		status       int
		says         string
	}{
		{"POST", "/api/runs", startRequest{Scenario: "no-such"}, http.StatusNotFound, `no scenario \"no-such\"`},
		{"POST", "/api/runs", startRequest{Scenario: "too-many-clients"}, http.StatusUnprocessableEntity, "cannot run in the running lab"},
		{"POST", "/api/runs", `{"scenario": "short", "fast": true}`, http.StatusBadRequest, "unknown field"},
		{"POST", "/api/runs", `not json`, http.StatusBadRequest, "want {"},
		{"POST", "/api/runs/current/stop", nil, http.StatusConflict, "no run in progress"},
		{"GET", "/api/runs/7", nil, http.StatusNotFound, "no run 7"},
		{"GET", "/api/runs/7/report.html", nil, http.StatusNotFound, "no run 7"},
		{"PATCH", "/api/knobs/semaphore", map[string]string{"LIMIT_WAIT": "soon", "REQUEST_TIMEOUT": "5s"}, http.StatusBadRequest, "LIMIT_WAIT"},
		{"PATCH", "/api/knobs/semaphore", map[string]string{"NO_SUCH_KNOB": "1"}, http.StatusBadRequest, "unknown knob"},
		{"PATCH", "/api/knobs/semaphore", map[string]string{"HTTP_SERVER": "nbio"}, http.StatusConflict, "needs a restart"},
		{"PATCH", "/api/knobs/semaphore", `{"DB_MAX_CONNS": 5}`, http.StatusBadRequest, "values as strings"},
		{"PATCH", "/api/knobs/nosuch", map[string]string{"DB_MAX_CONNS": "5"}, http.StatusNotFound, `no service \"nosuch\"`},
		{"PUT", "/api/background", map[string]float64{"unbounded": -1}, http.StatusBadRequest, "nothing was changed"},
		{"PUT", "/api/background", map[string]float64{"nosuch": 1}, http.StatusBadRequest, `no target \"nosuch\"`},
		{"GET", "/api/runs/1/series", nil, http.StatusNotFound, "no run 1"},
		{"DELETE", "/api/knobs", nil, http.StatusNotFound, "no such API endpoint"},
	} {
		code, body := f.call(tc.method, tc.path, tc.body, nil)
		if code != tc.status || !strings.Contains(body, tc.says) {
			t.Errorf("%s %s %v: %d %s, want %d saying %q", tc.method, tc.path, tc.body, code, body, tc.status, tc.says)
		}
	}
	if got := f.knobs("semaphore"); !maps.Equal(got, before) {
		t.Errorf("knobs after the refusals: %v, want them unchanged %v", got, before)
	}
	if got := f.rates.All(); got["unbounded"] != 4 || got["semaphore"] != 4 {
		t.Errorf("background rates after the refusals: %v", got)
	}
	var list struct{ Runs []api.Run }
	if f.call("GET", "/api/runs", nil, &list); len(list.Runs) != 0 {
		t.Errorf("runs after the refusals: %+v", list.Runs)
	}
}

func TestThePageIsServedFromTheBinary(t *testing.T) {
	srv := offlineServer(t)
	for path, want := range map[string]string{"/": `<script src="app.js"`, "/app.js": "/api/runs", "/style.css": "@media",
		"/echarts.min.js": "echarts"} {
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), want) {
			t.Errorf("GET %s: %d, want %q in it", path, rec.Code, want)
		}
		if strings.Contains(rec.Body.String(), "https://cdn") {
			t.Errorf("GET %s loads from a CDN", path)
		}
	}
}

// TestTheCatalogHasNoNullLists: the page reads every list of every entry
// (a tasks-only scenario names no panels).
func TestTheCatalogHasNoNullLists(t *testing.T) {
	all, err := catalog.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		data, err := json.Marshal(api.EntryOf(s))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), "null") {
			t.Errorf("%s: %s", s.Name, data)
		}
	}
}

// TestAnotherSiteCannotDriveTheAPI: the API takes no credential, so a page
// of another site open in the user's browser must not start a run, stop one
// or reset the knobs; the page itself (same origin) and curl (no browser
// headers) reach the handler, which answers their bad request 404.
func TestAnotherSiteCannotDriveTheAPI(t *testing.T) {
	srv := offlineServer(t)
	for _, c := range []struct {
		name   string
		header map[string]string
		want   int
	}{
		{"another site", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://example.com"}, http.StatusForbidden},
		{"an old browser on another site", map[string]string{"Origin": "https://example.com"}, http.StatusForbidden},
		{"the page", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "http://127.0.0.1:8080"}, http.StatusNotFound},
		{"curl", nil, http.StatusNotFound},
	} {
		req := httptest.NewRequest("POST", "http://127.0.0.1:8080/api/runs", strings.NewReader(`{"scenario":"nope"}`))
		req.Header.Set("Content-Type", "text/plain")
		for k, v := range c.header {
			req.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code != c.want {
			t.Errorf("%s: POST /api/runs answered %d, want %d", c.name, rec.Code, c.want)
		}
	}
}
