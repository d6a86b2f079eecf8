package knobs

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/orderlab/orderlab/lab/knobs/knobstest"
	"github.com/orderlab/orderlab/loadtest/scrape"
)

// The client against a loopback service that implements the knobs API as
// specified (knobstest): the services' own endpoint is tested in their
// packages, and end to end in e2e.
func TestPatchIsAllOrNothingAndRefusalsSayWhy(t *testing.T) {
	svc := knobstest.New("secret", map[string]string{"LIMIT": "20", "LIMIT_WAIT": "100ms", "HTTP_SERVER": "net/http"})
	defer svc.Close()
	ctx := context.Background()
	c := &Client{Admin: svc.URL, Token: "secret"}

	for _, tc := range []struct {
		name   string
		client *Client
		set    map[string]string
		status int
		names  string
	}{
		{"bad value", c, map[string]string{"LIMIT": "2", "LIMIT_WAIT": "soon"}, http.StatusBadRequest, "LIMIT_WAIT"},
		{"unknown knob", c, map[string]string{"LIMIT": "2", "NO_SUCH": "1"}, http.StatusBadRequest, "NO_SUCH"},
		{"restart-only", c, map[string]string{"LIMIT": "2", "HTTP_SERVER": "nbio"}, http.StatusConflict, "HTTP_SERVER"},
		{"no token", &Client{Admin: svc.URL}, map[string]string{"LIMIT": "2"}, http.StatusUnauthorized, "Bearer"},
		{"wrong token", &Client{Admin: svc.URL, Token: "guess"}, map[string]string{"LIMIT": "2"}, http.StatusForbidden, "token"},
	} {
		_, err := tc.client.Patch(ctx, tc.set)
		var ke *Error
		if !errors.As(err, &ke) || ke.Status != tc.status || !strings.Contains(err.Error(), tc.names) {
			t.Errorf("%s: Patch = %v, want a %d naming %s", tc.name, err, tc.status, tc.names)
		}
	}
	got, err := c.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got["LIMIT"] != "20" || got["LIMIT_WAIT"] != "100ms" {
		t.Errorf("after refused PATCHes GET /knobs = %v, want nothing changed", got)
	}
	after, err := c.Patch(ctx, map[string]string{"LIMIT": "adaptive", "LIMIT_WAIT": "25ms"})
	if err != nil {
		t.Fatal(err)
	}
	if after["LIMIT"] != (Knob{"adaptive", "runtime"}) || after["LIMIT_WAIT"] != (Knob{"25ms", "runtime"}) {
		t.Errorf("PATCH answered %v, want both as set, from runtime", after)
	}
	if got, _ := c.Get(ctx); got["LIMIT"] != "adaptive" || got["LIMIT_WAIT"] != "25ms" {
		t.Errorf("after PATCH GET /knobs = %v", got)
	}
	// "" puts a knob back as the service started, and says so.
	after, err = c.Patch(ctx, map[string]string{"LIMIT": ""})
	if err != nil {
		t.Fatal(err)
	}
	if after["LIMIT"] != (Knob{"20", "environment"}) {
		t.Errorf(`LIMIT="" answered %v, want 20 from the environment`, after["LIMIT"])
	}
	if ks, _ := c.Knobs(ctx); ks["LIMIT"] != (Knob{"20", "environment"}) || ks["LIMIT_WAIT"].Source != "runtime" {
		t.Errorf("GET /knobs after the reset = %v", ks)
	}
}

func TestWaitReturnsOnceTheGaugeShowsTheValue(t *testing.T) {
	svc := knobstest.New("secret", map[string]string{"DB_MAX_CONNS": "20", "REQUEST_TIMEOUT": "30s"})
	defer svc.Close()
	svc.GaugeLag = 300 * time.Millisecond
	ctx := context.Background()
	c := &Client{Admin: svc.URL, Token: "secret"}
	want := map[string]string{"DB_MAX_CONNS": "5", "REQUEST_TIMEOUT": "2s"}
	if _, err := c.Patch(ctx, want); err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(ctx, want, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	s, err := scrape.Scraper{URL: svc.URL + "/metrics"}.Scrape(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.Knobs["DB_MAX_CONNS"] != 5 || s.Knobs["REQUEST_TIMEOUT"] != 2 {
		t.Errorf("Wait returned before the gauges showed the change: %v", s.Knobs)
	}

	svc.GaugeLag = time.Hour // the gauge never follows
	want = map[string]string{"DB_MAX_CONNS": "7"}
	if _, err := c.Patch(ctx, want); err != nil {
		t.Fatal(err)
	}
	err = c.Wait(ctx, want, 300*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), `orderlab_knob_value{knob="DB_MAX_CONNS"} is 5, want 7`) {
		t.Errorf("Wait on a gauge that never follows = %v", err)
	}
}

func TestDecodeKnobsReadsAnObjectOrAList(t *testing.T) {
	for _, body := range []string{
		`{"LIMIT":{"value":"20","default":"","live":true,"source":"default"},"LIMIT_WAIT":{"value":"100ms"}}`,
		`{"knobs":[{"name":"LIMIT","value":"20"},{"name":"LIMIT_WAIT","value":"100ms"}]}`,
		`[{"knob":"LIMIT","value":20},{"knob":"LIMIT_WAIT","value":"100ms"}]`,
	} {
		got, err := decodeKnobs([]byte(body))
		if err != nil || got["LIMIT"].Value != "20" || got["LIMIT_WAIT"].Value != "100ms" || len(got) != 2 {
			t.Errorf("decodeKnobs(%s) = %v, %v", body, got, err)
		}
	}
}

func TestSameComparesMeanings(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"100ms", "0.1s", true}, {"20", "20.0", true}, {"2s", "2000ms", true}, {"adaptive", "adaptive", true},
		{"20", "adaptive", false}, {"", "20", false}, {"nbio", "net/http", false}, {"true", "false", false},
	} {
		if got := Same(tc.a, tc.b); got != tc.same {
			t.Errorf("Same(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.same)
		}
	}
}
