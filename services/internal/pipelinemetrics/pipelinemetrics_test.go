package pipelinemetrics

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/orderlab/orderlab/services/internal/model"
	"github.com/orderlab/orderlab/services/internal/order"
	"github.com/orderlab/orderlab/services/internal/overload"
	"github.com/orderlab/orderlab/services/internal/pipeline"
)

// noStore is a pipeline.Store the tests never reach.
type noStore struct{}

func (noStore) CreateOrders(context.Context, []order.Request, time.Duration, time.Duration) ([]order.Result, error) {
	return nil, nil
}
func (noStore) CreateOrder(context.Context, order.Request, time.Duration, time.Duration) (order.Result, error) {
	return order.Result{}, nil
}
func (noStore) HoldConnection(context.Context, time.Duration, int) error { return nil }
func (noStore) GetOrder(context.Context, int64) (order.Order, error)     { return order.Order{}, nil }

// Each stage's gauges show the newest Pipeline's, the audit stage's only
// when the service runs one; a refusal is counted by reason and its wait by
// outcome.
func TestStagesAndRejections(t *testing.T) {
	for _, audit := range []bool{false, true} {
		reg := prometheus.NewRegistry()
		m, err := New(reg, audit)
		if err != nil {
			t.Fatal(err)
		}
		p, err := pipeline.New(pipeline.Config{Workers: 3, BatchMax: 2, QueueCapacity: 1, PriceWorkers: 1}, noStore{},
			slog.New(slog.NewTextHandler(io.Discard, nil)), m, noop.NewTracerProvider())
		if err != nil {
			t.Fatal(err)
		}
		stages := 2
		if audit {
			stages = 3
		}
		if n, err := testutil.GatherAndCount(reg, "orderlab_pipeline_queue_length"); err != nil || n != stages {
			t.Errorf("audit %v: queue_length series = %d, %v; want %d, one per stage", audit, n, err, stages)
		}
		if v := stageGauge(t, reg, "orderlab_pipeline_workers", "persist"); v != 3 {
			t.Errorf("persist workers = %v, want WORKERS=3", v)
		}
		held, err := p.Admit(context.Background(), model.HoldConnection)
		if err != nil {
			t.Fatal(err)
		}
		var rej *overload.RejectedError
		if _, err := p.Admit(context.Background(), model.HoldConnection); !errors.As(err, &rej) {
			t.Fatalf("a second Admit into an intake of one = %v, want a rejection", err)
		}
		if v := testutil.ToFloat64(m.rejections.WithLabelValues(pipeline.ReasonIntakeFull)); v != 1 {
			t.Errorf("rejections{reason=intake_full} = %v, want 1", v)
		}
		if n := testutil.CollectAndCount(m.enqueueWait); n != 2 {
			t.Errorf("%d enqueue wait outcomes, want 2 (enqueued, rejected)", n)
		}
		held.Release(true)
		if err := p.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// stageGauge is the value of the gauge called name of stage.
func stageGauge(t *testing.T, reg *prometheus.Registry, name, stage string) float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, mt := range f.GetMetric() {
			if mt.GetLabel()[0].GetValue() == stage {
				return mt.GetGauge().GetValue()
			}
		}
	}
	t.Fatalf("no %s{stage=%q}", name, stage)
	return 0
}
