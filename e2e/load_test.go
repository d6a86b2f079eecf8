package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"
)

// overload is the load of the starvation check: the same closed-loop
// overload against every service at once. Each order holds its connection
// for dbDelay, so a pool of labKnobs' DB_MAX_CONNS serves at most
// DB_MAX_CONNS/dbDelay orders per second, far below what the clients ask.
type overload struct {
	clients  int
	duration time.Duration
	dbDelay  string
}

// runLoad runs loadtest (issue 3) in closed mode against one service, with
// POSTed orders, and logs its report. GRAFANA_URL points at the fake
// Grafana, which records the load-run annotations.
func runLoad(ctx context.Context, t *testing.T, loadtest string, s *labService, o overload, grafanaURL string) {
	t.Helper()
	args := []string{
		"closed",
		"-c", strconv.Itoa(o.clients),
		"-d", o.duration.String(),
		"-method", "POST",
		"-timeout", "30s",
		"-name", s.name,
		"-metrics", "http://" + s.adminAddr + "/metrics",
		"http://" + s.httpAddr + "/orders?db_delay=" + o.dbDelay,
	}
	cmd := exec.CommandContext(ctx, loadtest, args...)
	cmd.Env = append(baseEnv(), "GRAFANA_URL="+grafanaURL)
	out, err := cmd.CombinedOutput()
	// Exit status 1 means "requests failed or an SLO was missed": under
	// overload, failures (429, 503) are the point. Only a usage error (2)
	// or a crash is a broken test.
	if err != nil && cmd.ProcessState.ExitCode() != 1 {
		t.Errorf("loadtest %v: %v\n%s", args, err, out)
		return
	}
	t.Logf("loadtest %s:\n%s", s.name, out)
}

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
	g.URL = "http://admin:e2e@" + serveLoopback(t, mux)
	return g
}

func (g *fakeGrafana) recorded() []annotationCall {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]annotationCall(nil), g.calls...)
}
