// Package limiter owns the weighted semaphore that bounds concurrent database
// access in the semaphore service, with its metrics and wait spans.
package limiter

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/sync/semaphore"

	"github.com/orderlab/orderlab/services/internal/overload"
	"github.com/orderlab/orderlab/services/internal/telemetry"
)

// Limiter hands out at most Permits concurrent permits. A caller waits at
// most Wait for one; after that it is rejected, so that a saturated service
// answers 429 at once instead of queueing in front of the pool.
type Limiter struct {
	sem     *semaphore.Weighted
	permits int64
	wait    time.Duration
	tracer  trace.Tracer

	inUse   atomic.Int64
	waiters atomic.Int64

	waitSeconds *prometheus.HistogramVec
	rejections  prometheus.Counter
}

// New returns a Limiter of permits permits whose callers wait at most wait,
// with its metrics registered on reg.
func New(permits int64, wait time.Duration, reg prometheus.Registerer, tp trace.TracerProvider) (*Limiter, error) {
	l := &Limiter{
		sem:     semaphore.NewWeighted(permits),
		permits: permits,
		wait:    wait,
		tracer:  tp.Tracer("github.com/orderlab/orderlab/services/internal/limiter"),
		waitSeconds: prometheus.NewHistogramVec(telemetry.DurationHistogram("orderlab_limiter_wait_seconds",
			"Time waited for a semaphore permit, by outcome (acquired, rejected, canceled).",
			[]float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}), []string{"outcome"}),
		rejections: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "orderlab_limiter_rejections_total",
			Help: "Requests answered 429 because no permit came within LIMIT_WAIT.",
		}),
	}
	cs := []prometheus.Collector{
		l.waitSeconds, l.rejections,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "orderlab_limiter_permits", Help: "Permits in the semaphore (LIMIT).",
		}, func() float64 { return float64(l.permits) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "orderlab_limiter_permits_in_use", Help: "Permits held now.",
		}, func() float64 { return float64(l.inUse.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "orderlab_limiter_waiters", Help: "Requests waiting for a permit now.",
		}, func() float64 { return float64(l.waiters.Load()) }),
	}
	if err := telemetry.Register(reg, cs...); err != nil {
		return nil, err
	}
	return l, nil
}

// Acquire takes a permit, waiting at most the Limiter's wait, and returns the
// function that gives it back. When none comes in time the error is an
// *overload.RejectedError; when ctx ends first it is ctx's error.
func (l *Limiter) Acquire(ctx context.Context) (release func(), err error) {
	start := time.Now()
	_, span := l.tracer.Start(ctx, "limiter.wait", trace.WithAttributes(
		attribute.Int64("limiter.permits", l.permits),
		attribute.Int64("limiter.waiters", l.waiters.Load()),
	))
	defer span.End()

	outcome := "acquired"
	defer func() {
		waited := time.Since(start)
		telemetry.Observe(ctx, l.waitSeconds.WithLabelValues(outcome), waited.Seconds())
		span.SetAttributes(attribute.String("limiter.outcome", outcome))
	}()

	if !l.sem.TryAcquire(1) {
		err := l.waitForPermit(ctx)
		switch {
		case err == nil:
		case ctx.Err() != nil:
			outcome = "canceled"
			span.SetStatus(codes.Error, "canceled while waiting")
			return nil, ctx.Err()
		default:
			outcome = "rejected"
			l.rejections.Inc()
			span.SetStatus(codes.Error, "rejected")
			return nil, &overload.RejectedError{Resource: "semaphore", Waited: time.Since(start), RetryAfter: overload.RetryAfter}
		}
	}
	l.inUse.Add(1)
	var released atomic.Bool
	return func() {
		if released.CompareAndSwap(false, true) {
			l.inUse.Add(-1)
			l.sem.Release(1)
		}
	}, nil
}

// waitForPermit waits at most l.wait; a zero wait rejects at once.
func (l *Limiter) waitForPermit(ctx context.Context) error {
	if l.wait <= 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		return context.DeadlineExceeded
	}
	l.waiters.Add(1)
	defer l.waiters.Add(-1)
	wctx, cancel := context.WithTimeout(ctx, l.wait)
	defer cancel()
	return l.sem.Acquire(wctx, 1)
}
