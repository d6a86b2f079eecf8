package main

import (
	"context"
	"io"
	"net/http"
	"testing"
)

// A daemon serves from the moment it listens, stops when its context ends
// (nil: a clean stop) and then refuses connections; an address it cannot
// bind is an error at once.
func TestADaemonServesUntilItsContextEnds(t *testing.T) {
	d, err := listenAndServe("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "up")
	}))
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + d.addr.String() + "/"
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "up" {
		t.Errorf("GET %s = %q", url, body)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := d.serveUntil(ctx); err != nil {
		t.Errorf("a stop: %v, want nil", err)
	}
	if resp, err := http.Get(url); err == nil {
		resp.Body.Close()
		t.Errorf("GET %s answered %d after the stop", url, resp.StatusCode)
	}
	if _, err := listenAndServe("127.0.0.1:-1", http.NotFoundHandler()); err == nil {
		t.Error("listening on port -1 did not fail")
	}
}
