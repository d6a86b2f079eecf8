package grafanastub

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestStub(t *testing.T) {
	srv := httptest.NewServer(New())
	t.Cleanup(srv.Close)
	get := func(path string) (int, string, http.Header) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), resp.Header
	}
	for _, path := range []string{"/", "/d/orderlab-pool-starvation", "/login"} {
		code, body, h := get(path)
		if code != http.StatusNotFound || !strings.Contains(body, "This is not Grafana") || h.Get("X-Grafana-Stand-In") != "true" {
			t.Errorf("GET %s: %d %q: want 404 saying it is a stand-in", path, code, body)
		}
	}
	if code, body, _ := get("/api/health"); code != http.StatusOK || !strings.Contains(body, "This is not Grafana") {
		t.Errorf("GET /api/health: %d %q", code, body)
	}
	resp, err := http.Post(srv.URL+"/api/annotations", "application/json", strings.NewReader(`{"text":"run","tags":["loadtest"]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"id":1`) {
		t.Errorf("POST /api/annotations: %d %s", resp.StatusCode, body)
	}
	req, _ := http.NewRequest(http.MethodPatch, srv.URL+"/api/annotations/1", strings.NewReader(`{"timeEnd":1}`))
	if resp, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if _, body, _ := get("/api/annotations"); !strings.Contains(body, `"Method":"PATCH"`) {
		t.Errorf("GET /api/annotations: %s", body)
	}
	if calls := New().Calls(); len(calls) != 0 {
		t.Errorf("a new stub has %d calls", len(calls))
	}
}
