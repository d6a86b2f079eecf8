// Package diagnose reads which pitfall of the catalog a Prometheus sees now:
// the pitfall alerts of prometheus/rules (named as PitfallPoolStarvation,
// labels pitfall, service and severity, annotations summary, evidence and
// runbook_url), as /api/v1/rules and /api/v1/alerts answer them. It knows
// nothing of the lab: any Prometheus that scrapes the services' metrics
// and loads those rules answers it (docs/diagnose.md). lab diagnose prints
// its Report.
package diagnose

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/orderlab/orderlab/internal/httpjson"
)

// PitfallLabel is the label that makes an alerting rule a pitfall rule;
// its value is the pitfall's name in the catalog (pool-starvation).
const PitfallLabel = "pitfall"

// Finding is one pitfall alert firing.
type Finding struct {
	Pitfall  string     `json:"pitfall"`
	Service  string     `json:"service"`
	Since    time.Time  `json:"since"` // when its condition first held (Prometheus' activeAt)
	Evidence []Evidence `json:"evidence"`
	Page     string     `json:"page"` // the runbook: the scenario's page
	Summary  string     `json:"-"`    // the alert's sentence, for the text output
}

// Report is what Prometheus says about the pitfalls now.
type Report struct {
	Rules    int       // pitfall rules loaded
	Broken   []string  // pitfall rules whose last evaluation failed: "Name: error"
	Findings []Finding // firing, by pitfall, service, since
	Pending  []Finding // active but not yet for as long as their rule's for:
}

// ErrNoRules is Read's error when Prometheus answers but loads no pitfall
// rule: it cannot tell "no pitfall" from "not looking".
var ErrNoRules = errors.New("no pitfall rule loaded (an alerting rule with a pitfall label): this Prometheus cannot name a pitfall; load prometheus/rules/*.yml (docs/diagnose.md)")

// Read asks the Prometheus at base (http://127.0.0.1:9090) for its pitfall
// rules and their alerts. Any error means it could not ask: Prometheus
// unreachable, an answer that is not the API's, or no pitfall rule loaded
// (ErrNoRules, with the Report's other fields empty).
func Read(ctx context.Context, hc *http.Client, base string) (Report, error) {
	api := client{base: strings.TrimRight(base, "/"), hc: hc}
	var rules struct {
		Groups []struct {
			Rules []struct {
				Name      string            `json:"name"`
				Type      string            `json:"type"`
				Labels    map[string]string `json:"labels"`
				Health    string            `json:"health"`
				LastError string            `json:"lastError"`
			} `json:"rules"`
		} `json:"groups"`
	}
	if err := api.get(ctx, "/api/v1/rules", url.Values{"type": {"alert"}}, &rules); err != nil {
		return Report{}, err
	}
	var r Report
	for _, g := range rules.Groups {
		for _, rule := range g.Rules {
			if rule.Type != "alerting" || rule.Labels[PitfallLabel] == "" {
				continue
			}
			r.Rules++
			if rule.Health == "err" {
				r.Broken = append(r.Broken, rule.Name+": "+rule.LastError)
			}
		}
	}
	if r.Rules == 0 {
		return Report{}, ErrNoRules
	}
	var alerts struct {
		Alerts []struct {
			Labels      map[string]string `json:"labels"`
			Annotations map[string]string `json:"annotations"`
			State       string            `json:"state"`
			ActiveAt    time.Time         `json:"activeAt"`
		} `json:"alerts"`
	}
	if err := api.get(ctx, "/api/v1/alerts", nil, &alerts); err != nil {
		return Report{}, err
	}
	for _, a := range alerts.Alerts {
		pitfall := a.Labels[PitfallLabel]
		if pitfall == "" {
			continue // a symptom alert, not a diagnosis
		}
		f := Finding{
			Pitfall: pitfall,
			// A rule of a user's own may name the service by its job only.
			Service:  cmp.Or(a.Labels["service"], a.Labels["job"]),
			Since:    a.ActiveAt.UTC(),
			Evidence: ParseEvidence(a.Annotations["evidence"]),
			Page:     cmp.Or(a.Annotations["runbook_url"], "docs/scenarios/"+pitfall+".md"),
			Summary:  a.Annotations["summary"],
		}
		switch a.State {
		case "firing":
			r.Findings = append(r.Findings, f)
		case "pending":
			r.Pending = append(r.Pending, f)
		}
	}
	sortFindings(r.Findings)
	sortFindings(r.Pending)
	slices.Sort(r.Broken)
	return r, nil
}

func sortFindings(fs []Finding) {
	slices.SortFunc(fs, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(a.Pitfall, b.Pitfall), cmp.Compare(a.Service, b.Service), a.Since.Compare(b.Since))
	})
}

// client is the little of Prometheus' HTTP API that Read needs.
type client struct {
	base string
	hc   *http.Client
}

// maxAnswer bounds an answer read whole: a Prometheus with thousands of
// rules and alerts stays far below it.
const maxAnswer = 32 << 20

// get GETs path and decodes the envelope's data into v.
func (c client) get(ctx context.Context, path string, q url.Values, v any) error {
	u := c.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	resp, err := httpjson.Do(ctx, c.hc, http.MethodGet, u, nil, nil, maxAnswer)
	if err != nil && resp.Code == 0 {
		return err
	}
	if err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	body := resp.Body
	var answer struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &answer); err != nil || answer.Status == "" {
		return fmt.Errorf("GET %s: %s, not Prometheus' API: %.120q", u, resp.Status, body)
	}
	if answer.Status != "success" {
		return fmt.Errorf("GET %s: %s: %s", u, resp.Status, answer.Error)
	}
	if err := json.Unmarshal(answer.Data, v); err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	return nil
}
