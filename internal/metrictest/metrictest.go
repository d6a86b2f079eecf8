// Package metrictest is the tests' one reader of Prometheus metrics: the
// text exposition a service serves on /metrics (Scrape, Parse, with
// prometheus/common's expfmt) and a registry in the test's own process
// (Gather) both become Families, read by name and labels.
package metrictest

import (
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Families are metric families by name.
type Families map[string]*dto.MetricFamily

// Parse reads the Prometheus text format.
func Parse(r io.Reader) (Families, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	return Families(fams), err
}

// Scrape gets url (an exposition in the text format: a /metrics endpoint)
// and parses it; it fails t when either does not work.
func Scrape(t testing.TB, url string) Families {
	t.Helper()
	fams, err := ScrapeErr(url)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// ScrapeErr is Scrape that returns its error: for a scrape off the test's
// goroutine, or inside a wait (internal/poll) for an endpoint still coming up.
func ScrapeErr(url string) (Families, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	fams, err := Parse(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", url, err)
	}
	return fams, nil
}

// Gather reads a registry of the test's own process.
func Gather(t testing.TB, g prometheus.Gatherer) Families {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	fams := Families{}
	for _, mf := range mfs {
		fams[mf.GetName()] = mf
	}
	return fams
}

// Value is the sum of the family's samples whose labels include match: the
// counter or gauge value, or for a histogram its sample sum. A family or
// series that is not there is 0 (Has tells them apart).
func (f Families) Value(name string, match map[string]string) float64 {
	v, _ := f.Sample(name, match)
	return v
}

// Count is the observation count of a histogram family, over the samples
// whose labels include match.
func (f Families) Count(name string, match map[string]string) uint64 {
	_, c := f.Sample(name, match)
	return c
}

// Has says whether the family has a sample whose labels include match.
func (f Families) Has(name string, match map[string]string) bool {
	for _, m := range f[name].GetMetric() {
		if matches(m, match) {
			return true
		}
	}
	return false
}

// Sample returns a family's summed value (or histogram sum) and histogram
// count, over the samples whose labels include match.
func (f Families) Sample(name string, match map[string]string) (float64, uint64) {
	var sum float64
	var count uint64
	for _, m := range f[name].GetMetric() {
		if !matches(m, match) {
			continue
		}
		switch {
		case m.Counter != nil:
			sum += m.GetCounter().GetValue()
		case m.Gauge != nil:
			sum += m.GetGauge().GetValue()
		case m.Histogram != nil:
			sum += m.GetHistogram().GetSampleSum()
			count += m.GetHistogram().GetSampleCount()
		case m.Untyped != nil:
			sum += m.GetUntyped().GetValue()
		}
	}
	return sum, count
}

func matches(m *dto.Metric, match map[string]string) bool {
	for k, v := range match {
		found := false
		for _, lp := range m.GetLabel() {
			if lp.GetName() == k && lp.GetValue() == v {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}
