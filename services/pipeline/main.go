// Command pipeline is the order service whose requests flow through stages
// joined by bounded channels: the Go counterpart of WebFlux with
// backpressure. A fixed set of WORKERS persist workers commit orders in
// batches of up to BATCH_MAX; when the intake queue (QUEUE_CAPACITY) is full
// a handler waits at most ENQUEUE_WAIT, then answers 429. See
// services/internal/pipeline for the stages.
package main

import (
	"context"
	"fmt"
	"os"
	"runtime"

	"github.com/orderlab/orderlab/services/internal/app"
	"github.com/orderlab/orderlab/services/internal/audit"
	"github.com/orderlab/orderlab/services/internal/knob"
	"github.com/orderlab/orderlab/services/internal/model"
	"github.com/orderlab/orderlab/services/internal/pipeline"
)

func main() {
	if err := app.Run(context.Background(), service, os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "pipeline:", err)
		os.Exit(1)
	}
}

var service = app.Service{Model: "pipeline", Build: build}

// build reads WORKERS (default DB_MAX_CONNS), BATCH_MAX, BATCH_WAIT,
// QUEUE_CAPACITY, ENQUEUE_WAIT, AUDIT_WORKERS and AUDIT_QUEUE
// (services/internal/knob), and resizes the stages live when they change.
func build(d app.Deps) (model.Model, error) {
	p, err := pipeline.New(pipelineConfig(d.Knobs, d.Audit), d.Store, d.Log, d.Registry, d.Tracer)
	if err != nil {
		return nil, err // not a nil *Pipeline in a non-nil Model
	}
	tune(d.Live, p, d.Audit)
	return p, nil
}

func pipelineConfig(k *knob.Set, a *audit.Recorder) pipeline.Config {
	return pipeline.Config{
		Workers:       k.Int("WORKERS"),
		BatchMax:      k.Int("BATCH_MAX"),
		BatchWait:     k.Duration("BATCH_WAIT"),
		QueueCapacity: k.Int("QUEUE_CAPACITY"),
		EnqueueWait:   k.Duration("ENQUEUE_WAIT"),
		PriceWorkers:  runtime.GOMAXPROCS(0),
		CommitTimeout: k.Duration("REQUEST_TIMEOUT"),
		AuditWorkers:  k.Int("AUDIT_WORKERS"),
		AuditQueue:    k.Int("AUDIT_QUEUE"),
		Audit:         a,
	}
}

// tune resizes the stages when their knobs change.
func tune(live *app.Live, p *pipeline.Pipeline, a *audit.Recorder) {
	live.On(func(_ context.Context, next *knob.Set) error { return p.Resize(pipelineConfig(next, a)) },
		"WORKERS", "BATCH_MAX", "BATCH_WAIT", "QUEUE_CAPACITY", "ENQUEUE_WAIT", "AUDIT_WORKERS", "AUDIT_QUEUE")
}
