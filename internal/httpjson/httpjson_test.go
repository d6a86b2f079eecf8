package httpjson

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestDoSendsJSONAndReadsTheAnswerWhole: a body goes as JSON with its
// content type and the caller's headers; the answer comes back whole, up
// to the limit, with its status, a refusal as much as a success.
func TestDoSendsJSONAndReadsTheAnswerWhole(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in map[string]int
		if r.Header.Get("Content-Type") != "application/json" || r.Header.Get("Authorization") != "Bearer t" ||
			json.NewDecoder(r.Body).Decode(&in) != nil {
			http.Error(w, `{"error": "want a JSON body and the token"}`, http.StatusBadRequest)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]int{"twice": 2 * in["n"]})
	}))
	defer srv.Close()
	ctx := context.Background()
	a, err := Do(ctx, srv.Client(), http.MethodPost, srv.URL, http.Header{"Authorization": {"Bearer t"}}, map[string]int{"n": 21}, 1<<10)
	var out struct{ Twice int }
	if err != nil || !a.OK() || a.Decode(&out) != nil || out.Twice != 42 {
		t.Fatalf("answer %+v (%v), decoded %+v: want 200 and 42", a, err, out)
	}
	a, err = Do(ctx, srv.Client(), http.MethodGet, srv.URL, nil, nil, 8)
	if err != nil || a.OK() || a.Code != http.StatusBadRequest || a.Status != "400 Bad Request" || string(a.Body) != `{"error"` {
		t.Errorf("answer %+v (%v): want a 400 with the first 8 bytes of its body", a, err)
	}
	if _, err := Do(ctx, srv.Client(), http.MethodGet, "http://127.0.0.1:1", nil, nil, 8); err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Errorf("nothing listening: %v, want the error naming the address", err)
	}
}
