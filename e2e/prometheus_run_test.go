//go:build labcheck

package e2e

// The Prometheus the e2e runs: its binary and release, its flags and
// config file, a client of its API, and the waits on its scrapes.

import (
	"context"
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/types"

	"github.com/orderlab/orderlab/internal/poll"
)

// labPrometheusFlags returns the compose service's Prometheus flags (feature
// flags, retention) without the ones that name paths or addresses.
func labPrometheusFlags(project *types.Project) []string {
	var out []string
	for _, arg := range project.Services["prometheus"].Command {
		switch {
		case strings.HasPrefix(arg, "--config.file"),
			strings.HasPrefix(arg, "--storage.tsdb.path"),
			strings.HasPrefix(arg, "--web.listen-address"):
			continue
		}
		out = append(out, arg)
	}
	return out
}

// promAPI is a minimal client of Prometheus' HTTP API.
type promAPI struct {
	base string
	hc   *http.Client
}

type promSample struct {
	Metric map[string]string
	Value  float64
}

func (p promAPI) get(ctx context.Context, path string, params url.Values, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.base+path+"?"+params.Encode(), nil)
	if err != nil {
		return err
	}
	resp, err := p.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var env struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return fmt.Errorf("%s: %s: %.200s", path, resp.Status, body)
	}
	if env.Status != "success" {
		return fmt.Errorf("%s: %s", path, env.Error)
	}
	return json.Unmarshal(env.Data, out)
}

// query evaluates expr at ts. Float results only: every expression on the
// board returns floats.
func (p promAPI) query(ctx context.Context, expr string, ts time.Time) ([]promSample, error) {
	var data struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	}
	params := url.Values{"query": {expr}, "time": {strconv.FormatFloat(float64(ts.UnixMilli())/1000, 'f', 3, 64)}}
	if err := p.get(ctx, "/api/v1/query", params, &data); err != nil {
		return nil, err
	}
	switch data.ResultType {
	case "vector":
		var vec []struct {
			Metric    map[string]string `json:"metric"`
			Value     [2]any            `json:"value"`
			Histogram any               `json:"histogram"`
		}
		if err := json.Unmarshal(data.Result, &vec); err != nil {
			return nil, err
		}
		out := make([]promSample, 0, len(vec))
		for _, s := range vec {
			if s.Histogram != nil {
				return nil, fmt.Errorf("%s: returns a native histogram, not a float", expr)
			}
			v, err := strconv.ParseFloat(fmt.Sprint(s.Value[1]), 64)
			if err != nil {
				return nil, err
			}
			out = append(out, promSample{Metric: s.Metric, Value: v})
		}
		return out, nil
	case "scalar":
		var s [2]any
		if err := json.Unmarshal(data.Result, &s); err != nil {
			return nil, err
		}
		v, err := strconv.ParseFloat(fmt.Sprint(s[1]), 64)
		return []promSample{{Value: v}}, err
	}
	return nil, fmt.Errorf("%s: unexpected result type %s", expr, data.ResultType)
}

// byJob evaluates expr and indexes the result by its job label.
func (p promAPI) byJob(ctx context.Context, expr string, ts time.Time) (map[string]float64, error) {
	samples, err := p.query(ctx, expr, ts)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, s := range samples {
		out[s.Metric["job"]] = s.Value
	}
	return out, nil
}

type exemplarSeries struct {
	Exemplars []struct {
		Labels map[string]string `json:"labels"`
	} `json:"exemplars"`
}

// exemplars runs the exemplar query Grafana runs for a panel query with
// exemplars switched on.
func (p promAPI) exemplars(ctx context.Context, expr string, start, end time.Time) ([]exemplarSeries, error) {
	var out []exemplarSeries
	params := url.Values{
		"query": {expr},
		"start": {strconv.FormatInt(start.Unix(), 10)},
		"end":   {strconv.FormatInt(end.Unix()+1, 10)},
	}
	err := p.get(ctx, "/api/v1/query_exemplars", params, &out)
	return out, err
}

type promRule struct {
	Name      string `json:"name"`
	Type      string `json:"type"`
	Health    string `json:"health"`
	LastError string `json:"lastError"`
	Alerts    []struct {
		Labels map[string]string `json:"labels"`
		State  string            `json:"state"`
	} `json:"alerts"`
}

func (p promAPI) rules(ctx context.Context) ([]promRule, error) {
	var data struct {
		Groups []struct {
			Rules []promRule `json:"rules"`
		} `json:"groups"`
	}
	if err := p.get(ctx, "/api/v1/rules", nil, &data); err != nil {
		return nil, err
	}
	var out []promRule
	for _, g := range data.Groups {
		out = append(out, g.Rules...)
	}
	return out, nil
}

type promTarget struct {
	Health     string    `json:"health"`
	LastError  string    `json:"lastError"`
	ScrapeURL  string    `json:"scrapeUrl"`
	LastScrape time.Time `json:"lastScrape"`
}

func (p promAPI) targets(ctx context.Context) ([]promTarget, error) {
	var data struct {
		Active []promTarget `json:"activeTargets"`
	}
	err := p.get(ctx, "/api/v1/targets", url.Values{"state": {"active"}}, &data)
	return data.Active, err
}

// labelValues is what the board's $service variable evaluates to.
func (p promAPI) labelValues(ctx context.Context, label, match string) ([]string, error) {
	var out []string
	err := p.get(ctx, "/api/v1/label/"+label+"/values", url.Values{"match[]": {match}}, &out)
	return out, err
}

// prometheusBin is $PROMETHEUS, or bin/prometheus (make bin/prometheus).
func prometheusBin(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("PROMETHEUS")
	if bin == "" {
		bin = filepath.Join(root, "bin", "prometheus")
	}
	bin, _ = filepath.Abs(bin)
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("prometheus binary: %v (make bin/prometheus, or set PROMETHEUS)", err)
	}
	return bin
}

// waitTargetsUp waits until Prometheus scrapes want targets successfully.
func waitTargetsUp(t *testing.T, ctx context.Context, api promAPI, want int) {
	t.Helper()
	poll.Until(t, 30*time.Second, fmt.Sprintf("%d targets up", want), func() error {
		targets, err := api.targets(ctx)
		up := 0
		var down []string
		for _, tg := range targets {
			if tg.Health == "up" {
				up++
			} else {
				down = append(down, fmt.Sprintf("%s (%s %s)", tg.ScrapeURL, tg.Health, tg.LastError))
			}
		}
		if err != nil || up != want {
			return fmt.Errorf("%d of %d targets up (err %v); down: %v", up, want, err, down)
		}
		return nil
	})
}

// waitScrapedSince waits until every target has been scraped twice since
// t0 (its last scrape began at least one interval after t0), so that rates
// over a window ending at t0 include its end.
func waitScrapedSince(t *testing.T, ctx context.Context, api promAPI, t0 time.Time) {
	t.Helper()
	interval, err := time.ParseDuration(globalScrapeInterval(t))
	if err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 10*interval+30*time.Second, "two scrapes of every target since "+t0.Format(time.TimeOnly), func() error {
		targets, err := api.targets(ctx)
		if err != nil {
			return err
		}
		for _, tg := range targets {
			if tg.LastScrape.Before(t0.Add(interval)) {
				return fmt.Errorf("%s last scraped at %s", tg.ScrapeURL, tg.LastScrape.Format(time.TimeOnly))
			}
		}
		return nil
	})
}

// waitEvaluatedSince waits until every rule group has been evaluated since
// t0, so that the recording rules and the alerts include what Prometheus
// had scraped by then.
func waitEvaluatedSince(t *testing.T, ctx context.Context, api promAPI, t0 time.Time) {
	t.Helper()
	poll.Until(t, 2*time.Minute, "an evaluation of every rule group since "+t0.Format(time.TimeOnly), func() error {
		var data struct {
			Groups []struct {
				Name           string    `json:"name"`
				LastEvaluation time.Time `json:"lastEvaluation"`
			} `json:"groups"`
		}
		if err := api.get(ctx, "/api/v1/rules", nil, &data); err != nil {
			return err
		}
		if len(data.Groups) == 0 {
			return errors.New("no rule group")
		}
		for _, g := range data.Groups {
			if g.LastEvaluation.Before(t0) {
				return fmt.Errorf("group %s last evaluated at %s", g.Name, g.LastEvaluation.Format(time.TimeOnly))
			}
		}
		return nil
	})
}

// checkPrometheusRelease makes sure the Prometheus under test is the
// release compose.yaml runs: a `go install` build carries its module version
// (v0.3MM.P for v3.MM.P); Debian's package carries none and is accepted with
// a note.
func checkPrometheusRelease(t *testing.T, bin, image string) {
	t.Helper()
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Logf("prometheus %s: no Go build info (%v); not checking its release", bin, err)
		return
	}
	v := info.Main.Version
	got, ok := prometheusRelease(v)
	if !ok {
		t.Logf("prometheus %s: module version %q; not checking its release", bin, v)
		return
	}
	if got != imageTag(image) {
		t.Fatalf("prometheus under test is %s (%s), compose.yaml runs %s", got, v, image)
	}
	t.Logf("prometheus under test: %s %s, the release of %s", info.Main.Path, v, image)
}

// writeFile writes data to dir/name and returns the path.
func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
