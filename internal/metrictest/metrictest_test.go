package metrictest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// The same registry read as text over HTTP and gathered in process gives
// the same figures: counters and gauges by labels, histograms' sums and
// counts, absent series as 0 and not Has.
func TestScrapeAndGatherAgree(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "x_total", Help: "x"}, []string{"class"})
	c.WithLabelValues("a").Add(2)
	c.WithLabelValues("b").Add(3)
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "h_seconds", Help: "h"})
	h.Observe(0.25)
	h.Observe(0.5)
	reg.MustRegister(c, h)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()

	for name, fams := range map[string]Families{"scraped": Scrape(t, srv.URL), "gathered": Gather(t, reg)} {
		if v := fams.Value("x_total", nil); v != 5 {
			t.Errorf("%s: x_total = %v, want 5 (summed)", name, v)
		}
		if v := fams.Value("x_total", map[string]string{"class": "b"}); v != 3 {
			t.Errorf("%s: x_total{class=b} = %v, want 3", name, v)
		}
		if v, n := fams.Sample("h_seconds", nil); v != 0.75 || n != 2 {
			t.Errorf("%s: h_seconds sum %v count %d, want 0.75 and 2", name, v, n)
		}
		if fams.Has("x_total", map[string]string{"class": "c"}) || !fams.Has("x_total", map[string]string{"class": "a"}) ||
			fams.Value("nothing", nil) != 0 {
			t.Errorf("%s: Has or an absent family is wrong", name)
		}
	}
}

func TestScrapeErrSaysWhatFailed(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	if _, err := ScrapeErr(srv.URL); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("ScrapeErr of a 404 = %v", err)
	}
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("x_total{ 1\n")) }))
	defer bad.Close()
	if _, err := ScrapeErr(bad.URL); err == nil || !strings.Contains(err.Error(), "parse") {
		t.Errorf("ScrapeErr of bad text = %v", err)
	}
}
