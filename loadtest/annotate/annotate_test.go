package annotate

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRunBecomesATaggedRegion(t *testing.T) {
	var mu sync.Mutex
	var calls []string
	var start, patch map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		if !ok || user != "admin" || pass != "s3cret" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, r.Method+" "+r.URL.Path)
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		switch r.Method {
		case http.MethodPost:
			start = body
			_, _ = w.Write([]byte(`{"id":42,"message":"Annotation added"}`))
		case http.MethodPatch:
			patch = body
			_, _ = w.Write([]byte(`{"message":"Annotation patched"}`))
		}
	}))
	defer srv.Close()

	c, err := New(strings.Replace(srv.URL, "http://", "http://admin:s3cret@", 1))
	if err != nil {
		t.Fatal(err)
	}
	run, err := c.Start(context.Background(), "closed -c 10 unbounded", "closed", "unbounded")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.End(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(calls, ",") != "POST /api/annotations,PATCH /api/annotations/42" {
		t.Fatalf("calls = %v", calls)
	}
	tags, _ := start["tags"].([]any)
	if len(tags) != 3 || tags[0] != Tag || tags[2] != "unbounded" || start["text"] != "closed -c 10 unbounded" {
		t.Errorf("start annotation = %v", start)
	}
	if patch["time"] != start["time"] || patch["timeEnd"].(float64) < start["time"].(float64) {
		t.Errorf("end = %v, start = %v: want a region from start to end", patch, start)
	}
}

func TestErrorsAndNoURL(t *testing.T) {
	var nilClient *Client
	if c, err := New(""); c != nil || err != nil {
		t.Fatalf("New(\"\") = %v, %v", c, err)
	}
	if _, err := nilClient.Start(context.Background(), "x"); err != nil {
		t.Errorf("nil client Start = %v", err)
	}
	if _, err := New("grafana:3000"); err == nil {
		t.Error("a URL without scheme was accepted")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"message":"Unauthorized"}`, http.StatusUnauthorized)
	}))
	defer srv.Close()
	c, _ := New(srv.URL)
	if _, err := c.Start(context.Background(), "x"); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("Start against a 401 = %v", err)
	}
}

// TestRefusedLoginIsReportedOnce: a Grafana that refuses the login (its
// admin password is not the one in GRAFANA_URL) gets one clear error that
// names the fix, and no further requests.
func TestRefusedLoginIsReportedOnce(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.Error(w, `{"message":"Invalid username or password"}`, http.StatusUnauthorized)
	}))
	defer srv.Close()
	c, err := New(strings.Replace(srv.URL, "http://", "http://admin:stale@", 1))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Start(context.Background(), "run 1")
	if !errors.Is(err, ErrRefused) {
		t.Fatalf("Start against a 401 = %v, want ErrRefused", err)
	}
	for _, want := range []string{"401", `user "admin"`, "GRAFANA_ADMIN_PASSWORD", "docs/lab.md"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
	if strings.Contains(err.Error(), "stale") {
		t.Errorf("error %q shows the password", err)
	}
	for i := range 3 {
		run, err := c.Start(context.Background(), "run")
		if err != nil {
			t.Errorf("Start %d after the refusal = %v, want nothing more said", i+2, err)
		}
		if err := c.End(context.Background(), run); err != nil {
			t.Errorf("End after the refusal = %v", err)
		}
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("Grafana got %d requests, want 1: after a refusal the client stops asking", n)
	}
}
