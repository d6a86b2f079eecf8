package limitermetrics

import (
	"context"
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/orderlab/orderlab/services/internal/limiter"
	"github.com/orderlab/orderlab/services/internal/overload"
)

// gauges are the values of the series called name, by their one label.
func gauges(t *testing.T, reg *prometheus.Registry, name string) map[string]float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range fams {
		if f.GetName() == name {
			for _, m := range f.GetMetric() {
				got[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
			}
		}
	}
	return got
}

// The newest Limiter's limit is exported with its mode as a label, and the
// pool-watching limit's signals while it is the limit.
func TestLimitAndSignals(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := New(reg)
	if err != nil {
		t.Fatal(err)
	}
	pool := func() limiter.PoolWaits { return limiter.PoolWaits{} }
	if _, err := limiter.New(limiter.Config{Adaptive: true, Min: 1, Max: 5, PoolWaits: pool}, m); err != nil {
		t.Fatal(err)
	}
	if got := gauges(t, reg, "orderlab_limiter_limit"); got["adaptive"] != 5 || len(got) != 1 {
		t.Errorf("orderlab_limiter_limit %v, want adaptive 5", got)
	}
	if got := gauges(t, reg, "orderlab_limiter_signal"); len(got) != 2 {
		t.Errorf("orderlab_limiter_signal %v, want pool_wait_share and hold_vs_baseline", got)
	}
	if _, err := limiter.New(limiter.Config{Permits: 7}, m); err != nil { // a live change to a fixed limit
		t.Fatal(err)
	}
	if got := gauges(t, reg, "orderlab_limiter_limit"); got["fixed"] != 7 || len(got) != 1 {
		t.Errorf("orderlab_limiter_limit %v, want fixed 7", got)
	}
	if got := gauges(t, reg, "orderlab_limiter_signal"); len(got) != 0 {
		t.Errorf("orderlab_limiter_signal %v with a fixed limit, want none", got)
	}
}

// A rejection is counted by reason and its wait by outcome; the permits in
// use count up and down.
func TestCounts(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := New(reg)
	if err != nil {
		t.Fatal(err)
	}
	l, err := limiter.New(limiter.Config{Permits: 1}, m)
	if err != nil {
		t.Fatal(err)
	}
	p, err := l.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var rej *overload.RejectedError
	if _, err := l.Acquire(context.Background()); !errors.As(err, &rej) {
		t.Fatalf("second Acquire = %v, want a rejection", err)
	}
	if got := testutil.ToFloat64(m.rejections.WithLabelValues(limiter.ReasonAtLimit)); got != 1 {
		t.Errorf("rejections{reason=at_limit} = %v, want 1", got)
	}
	if got := testutil.CollectAndCount(m.waitSeconds); got != 2 {
		t.Errorf("%d wait outcomes, want 2 (acquired, rejected)", got)
	}
	if n := m.inUse.Load(); n != 1 {
		t.Errorf("%d in use, want 1", n)
	}
	p.Release(true)
	if n := m.inUse.Load(); n != 0 {
		t.Errorf("%d in use after the release, want 0", n)
	}
}
