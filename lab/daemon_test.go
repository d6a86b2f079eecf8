package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/orderlab/orderlab/internal/cli"
)

// A daemon serves from the moment it listens, stops when its context ends
// (exit 0, nothing said) and then refuses connections; an address it cannot
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
	var stderr strings.Builder
	if code := d.serveUntil(ctx, "test", &stderr); code != cli.ExitOK || stderr.Len() > 0 {
		t.Errorf("a stop: exit %d, stderr %q; want 0 and nothing said", code, stderr.String())
	}
	if resp, err := http.Get(url); err == nil {
		resp.Body.Close()
		t.Errorf("GET %s answered %d after the stop", url, resp.StatusCode)
	}
	if _, err := listenAndServe("127.0.0.1:-1", http.NotFoundHandler()); err == nil {
		t.Error("listening on port -1 did not fail")
	}
}
