package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
)

// fakeGrafana records the annotation calls loadtest makes: a POST
// /api/annotations at the start of a run, a PATCH /api/annotations/{id} at
// its end.
type fakeGrafana struct {
	URL string

	mu    sync.Mutex
	calls []annotationCall
}

// annotationCall is one request to the fake Grafana.
type annotationCall struct {
	Method, ID, Auth string
	Body             map[string]any
}

func newFakeGrafana(t *testing.T) *fakeGrafana {
	t.Helper()
	g := &fakeGrafana{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/annotations", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var a map[string]any
		if err := json.Unmarshal(body, &a); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		g.mu.Lock()
		id := strconv.Itoa(len(g.calls) + 1)
		g.calls = append(g.calls, annotationCall{Method: r.Method, ID: id, Auth: r.Header.Get("Authorization"), Body: a})
		g.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":` + id + `,"message":"Annotation added"}`)) //nolint:errcheck // test server
	})
	mux.HandleFunc("PATCH /api/annotations/{id}", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var a map[string]any
		json.Unmarshal(body, &a) //nolint:errcheck // recorded as is
		g.mu.Lock()
		g.calls = append(g.calls, annotationCall{Method: r.Method, ID: r.PathValue("id"), Auth: r.Header.Get("Authorization"), Body: a})
		g.mu.Unlock()
		w.Write([]byte(`{"message":"Annotation patched"}`)) //nolint:errcheck // test server
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	g.URL = "http://admin:e2e@" + srv.Listener.Addr().String()
	return g
}

func (g *fakeGrafana) recorded() []annotationCall {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]annotationCall(nil), g.calls...)
}
