// Package knobs reads and changes the knobs of a running service through
// its admin listener: GET /knobs and PATCH /knobs with a JSON object of
// knob -> value in the environment's syntax, Authorization: Bearer
// ADMIN_TOKEN (docs/lab-scenarios.md). Wait polls until a change shows both
// in GET /knobs and in the gauge orderlab_knob_value{knob} of /metrics.
package knobs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/orderlab/orderlab/internal/httpjson"
	"github.com/orderlab/orderlab/loadtest/scrape"
)

// Client talks to one service's admin listener. It is safe for concurrent use.
type Client struct {
	Admin string // the admin listener's base URL, e.g. http://127.0.0.1:9091
	Token string // ADMIN_TOKEN; empty sends no Authorization header
	HTTP  *http.Client
}

// Error is a PATCH the service refused: 400 (a bad value or an unknown
// knob, named in Message), 401/403 (no or a wrong token, or the endpoint is
// read-only), 409 (a restart-only knob). Nothing of the PATCH was applied.
type Error struct {
	Status  int
	Message string
}

func (e *Error) Error() string {
	hint := ""
	switch e.Status {
	case http.StatusUnauthorized, http.StatusForbidden:
		hint = " (set ADMIN_TOKEN to the token the services run with; docs/lab-scenarios.md)"
	case http.StatusConflict:
		hint = " (a restart-only knob: recreate the service with it set instead)"
	}
	return fmt.Sprintf("PATCH /knobs: %d %s: %s%s", e.Status, http.StatusText(e.Status), e.Message, hint)
}

func (c *Client) client() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return &http.Client{Timeout: 5 * time.Second}
}

func (c *Client) url(path string) string { return strings.TrimRight(c.Admin, "/") + path }

// Knob is one knob as GET /knobs shows it: its value in the environment's
// syntax, and where the value came from (default, environment or runtime).
type Knob struct {
	Value  string
	Source string
}

// Get returns every knob's current value, in the environment's syntax.
func (c *Client) Get(ctx context.Context) (map[string]string, error) {
	ks, err := c.Knobs(ctx)
	if err != nil {
		return nil, err
	}
	vals := map[string]string{}
	for name, k := range ks {
		vals[name] = k.Value
	}
	return vals, nil
}

// Knobs returns every knob's current value and source.
func (c *Client) Knobs(ctx context.Context) (map[string]Knob, error) {
	body, err := c.GetJSON(ctx)
	if err != nil {
		return nil, err
	}
	ks, err := decodeKnobs(body)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", c.url("/knobs"), err)
	}
	return ks, nil
}

// GetJSON returns GET /knobs's answer as the service wrote it (each knob's
// value, default, range and meaning: the front page's knob form).
func (c *Client) GetJSON(ctx context.Context) ([]byte, error) {
	a, err := httpjson.Do(ctx, c.client(), http.MethodGet, c.url("/knobs"), nil, nil, 1<<20)
	if err != nil {
		return nil, err
	}
	if a.Code != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %s", c.url("/knobs"), a.Status, bytes.TrimSpace(a.Body))
	}
	return a.Body, nil
}

// auth is the header that carries the token, if any.
func (c *Client) auth() http.Header {
	if c.Token == "" {
		return nil
	}
	return http.Header{"Authorization": {"Bearer " + c.Token}}
}

// decodeKnobs reads each knob's value and source from GET /knobs (or from
// PATCH /knobs's answer): an object of knob -> {"value": ..., "source": ...}
// (or -> value), or a list of {"name": ..., "value": ...}, either possibly
// under "knobs".
func decodeKnobs(body []byte) (map[string]Knob, error) {
	var top any
	if err := json.Unmarshal(body, &top); err != nil {
		return nil, err
	}
	if m, ok := top.(map[string]any); ok {
		if inner, ok := m["knobs"]; ok {
			top = inner
		}
	}
	of := func(v any) Knob {
		m, ok := v.(map[string]any)
		if !ok {
			return Knob{Value: text(v)}
		}
		src, _ := m["source"].(string)
		return Knob{Value: text(m["value"]), Source: src}
	}
	out := map[string]Knob{}
	switch t := top.(type) {
	case map[string]any:
		for name, v := range t {
			out[name] = of(v)
		}
	case []any:
		for _, e := range t {
			m, ok := e.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("knob entry %v is not an object", e)
			}
			name, _ := m["name"].(string)
			if name == "" {
				name, _ = m["knob"].(string)
			}
			if name == "" {
				return nil, fmt.Errorf("knob entry %v has no name", e)
			}
			out[name] = of(m)
		}
	default:
		return nil, errors.New("want an object or a list of knobs")
	}
	return out, nil
}

func text(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(t)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// Patch sets the knobs in set, all or none, and returns every knob as the
// service shows it after the change (a knob set to "", back as the service
// started, with the value that resolved to; a knob that follows another,
// moved with it). A refusal is an *Error.
func (c *Client) Patch(ctx context.Context, set map[string]string) (map[string]Knob, error) {
	a, err := httpjson.Do(ctx, c.client(), http.MethodPatch, c.url("/knobs"), c.auth(), set, 1<<20)
	if err != nil && a.Code == 0 {
		return nil, err
	}
	if !a.OK() {
		return nil, &Error{Status: a.Code, Message: string(bytes.TrimSpace(a.Body))}
	}
	ks, err := decodeKnobs(a.Body)
	if err != nil {
		return nil, fmt.Errorf("PATCH %s: the answer: %w", c.url("/knobs"), err)
	}
	return ks, nil
}

// ReleaseLeaked hands back every connection LEAK_EVERY kept (POST
// /knobs/release-leaked) and returns how many.
func (c *Client) ReleaseLeaked(ctx context.Context) (int, error) {
	a, err := httpjson.Do(ctx, c.client(), http.MethodPost, c.url("/knobs/release-leaked"), c.auth(), nil, 4096)
	if err != nil && a.Code == 0 {
		return 0, err
	}
	if !a.OK() {
		return 0, &Error{Status: a.Code, Message: string(bytes.TrimSpace(a.Body))}
	}
	var out struct {
		Released int `json:"released"`
	}
	if err := a.Decode(&out); err != nil {
		return 0, fmt.Errorf("POST /knobs/release-leaked: %w", err)
	}
	return out.Released, nil
}

// Wait polls GET /knobs and /metrics until every knob of want shows its
// value in both (a knob whose value has no number, such as LIMIT=adaptive,
// only in GET /knobs), or timeout passes.
func (c *Client) Wait(ctx context.Context, want map[string]string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	sc := scrape.Scraper{URL: c.url("/metrics"), Client: c.HTTP}
	for {
		lag, err := c.lagging(ctx, sc, want)
		if err == nil && len(lag) == 0 {
			return nil
		}
		if err == nil {
			err = fmt.Errorf("not yet applied: %s", strings.Join(lag, ", "))
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			return fmt.Errorf("%s: knobs not applied after %s: %w", c.Admin, timeout, err)
		}
		t := time.NewTimer(50 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
	}
}

// lagging names the knobs of want that do not show their value yet.
func (c *Client) lagging(ctx context.Context, sc scrape.Scraper, want map[string]string) ([]string, error) {
	got, err := c.Get(ctx)
	if err != nil {
		return nil, err
	}
	s, err := sc.Scrape(ctx)
	if err != nil {
		return nil, err
	}
	var lag []string
	for _, name := range slices.Sorted(maps.Keys(want)) {
		v := want[name]
		if have, ok := got[name]; !ok || !Same(have, v) {
			lag = append(lag, fmt.Sprintf("GET /knobs has %s=%q, want %q", name, have, v))
			continue
		}
		n, numeric := Number(v)
		if !numeric {
			continue
		}
		if g, ok := s.Knobs[name]; !ok || math.Abs(g-n) > 1e-9*max(1, math.Abs(n)) {
			lag = append(lag, fmt.Sprintf("orderlab_knob_value{knob=%q} is %v, want %v", name, g, n))
		}
	}
	return lag, nil
}

// Number is the gauge's value for a knob value: durations in seconds,
// booleans 0/1, numbers as they are. It reports false for other values
// (an empty value, "adaptive", "nbio").
func Number(v string) (float64, bool) {
	v = strings.TrimSpace(v)
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		return f, true
	}
	if d, err := time.ParseDuration(v); err == nil {
		return d.Seconds(), true
	}
	switch strings.ToLower(v) {
	case "true":
		return 1, true
	case "false":
		return 0, true
	}
	return 0, false
}

// Same reports whether two values in the environment's syntax mean the same
// ("100ms" and "0.1s", "20" and "20.0"); other values must be equal.
func Same(a, b string) bool {
	if strings.TrimSpace(a) == strings.TrimSpace(b) {
		return true
	}
	x, okA := Number(a)
	y, okB := Number(b)
	return okA && okB && x == y
}
