// Package annotate marks load runs on the Grafana board through Grafana's
// HTTP annotations API: a region from the start of a run to its end, tagged
// "loadtest", which the board's "Load runs" annotation query shows.
//
// When Grafana refuses the login (the lab's admin password changed after
// Grafana was first started, docs/lab.md), the first call returns an error
// that says so and how to fix it, and the client stops trying: one clear
// message, not one per run.
package annotate

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/orderlab/orderlab/internal/httpjson"
)

// Tag is on every annotation; the board's "Load runs" annotation query
// (grafana/board) selects it. It is the tag's one definition.
const Tag = "loadtest"

// ErrRefused is the error of a call Grafana answered 401 or 403: the login
// in GRAFANA_URL is wrong, or may not write annotations.
var ErrRefused = errors.New("grafana refused the login of GRAFANA_URL")

// Client posts annotations to one Grafana. It is safe for concurrent use.
type Client struct {
	base       *url.URL
	user, pass string
	http       *http.Client
	refused    atomic.Bool // Grafana refused the login once: do not ask again
}

// New reads Grafana's URL (GRAFANA_URL), with optional basic-auth
// credentials in it (http://admin:secret@grafana:3000). An empty URL gives a
// nil Client, whose methods do nothing.
func New(rawURL string) (*Client, error) {
	if rawURL == "" {
		return nil, nil
	}
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("GRAFANA_URL=%q: want http(s)://[user:password@]host:port", rawURL)
	}
	c := &Client{base: u, http: &http.Client{Timeout: 5 * time.Second}}
	if u.User != nil {
		c.user = u.User.Username()
		c.pass, _ = u.User.Password()
	}
	u.User = nil
	return c, nil
}

// Run is an annotation that Start opened and End closes.
type Run struct {
	id    int64
	start time.Time
}

// Start marks the beginning of a run with text and tags (Tag is added).
// After Grafana has refused the login once, it does nothing.
func (c *Client) Start(ctx context.Context, text string, tags ...string) (Run, error) {
	if c == nil || c.refused.Load() {
		return Run{}, nil
	}
	now := time.Now()
	body := map[string]any{"time": now.UnixMilli(), "text": text, "tags": append([]string{Tag}, tags...)}
	var out struct {
		ID int64 `json:"id"`
	}
	if err := c.do(ctx, http.MethodPost, "/api/annotations", body, &out); err != nil {
		return Run{}, err
	}
	return Run{id: out.ID, start: now}, nil
}

// End turns the run's annotation into a region ending now.
func (c *Client) End(ctx context.Context, r Run) error {
	if c == nil || r.id == 0 {
		return nil
	}
	body := map[string]any{"time": r.start.UnixMilli(), "timeEnd": time.Now().UnixMilli()}
	return c.do(ctx, http.MethodPatch, fmt.Sprintf("/api/annotations/%d", r.id), body, nil)
}

func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	u := *c.base
	u.Path = strings.TrimSuffix(u.Path, "/") + path
	var header http.Header
	if c.user != "" {
		header = http.Header{"Authorization": {"Basic " + base64.StdEncoding.EncodeToString([]byte(c.user+":"+c.pass))}}
	}
	resp, err := httpjson.Do(ctx, c.http, method, u.String(), header, body, 4096)
	if err != nil && resp.Code == 0 {
		return fmt.Errorf("grafana annotation: %w", err)
	}
	msg := resp.Body
	if resp.Code == http.StatusUnauthorized || resp.Code == http.StatusForbidden {
		if c.refused.Swap(true) {
			return nil // said once already
		}
		return fmt.Errorf("%w (user %q at %s: %s). Load runs are not marked on the board. "+
			"Grafana keeps the admin password it was first started with: if GRAFANA_ADMIN_PASSWORD "+
			"changed since, set Grafana's to it (docs/lab.md, \"The Grafana admin password\")",
			ErrRefused, c.user, c.base, resp.Status)
	}
	if !resp.OK() {
		return fmt.Errorf("grafana annotation: %s %s: %s %s", method, path, resp.Status, bytes.TrimSpace(msg))
	}
	if out != nil {
		if err := resp.Decode(out); err != nil {
			return fmt.Errorf("grafana annotation: %w", err)
		}
	}
	return nil
}
