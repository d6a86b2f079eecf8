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
	"github.com/orderlab/orderlab/services/internal/knob"
	"github.com/orderlab/orderlab/services/internal/model"
	"github.com/orderlab/orderlab/services/internal/pipeline"
	"github.com/orderlab/orderlab/services/internal/pipelinemetrics"
)

func main() {
	if err := app.Run(context.Background(), service, os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "pipeline:", err)
		os.Exit(1)
	}
}

var service = app.Service{Model: "pipeline", Start: start}

// start registers the pipeline's metrics, and builds each model from
// WORKERS (default DB_MAX_CONNS), BATCH_MAX, BATCH_WAIT, QUEUE_CAPACITY,
// ENQUEUE_WAIT, AUDIT_WORKERS and AUDIT_QUEUE (services/internal/knob).
func start(d app.Deps) (app.Build, error) {
	met, err := pipelinemetrics.New(d.Registry, d.Audit != nil)
	if err != nil {
		return nil, err
	}
	return func(k *knob.Set) (model.Model, error) {
		p, err := pipeline.New(pipeline.Config{
			Workers:       k.Int("WORKERS"),
			BatchMax:      k.Int("BATCH_MAX"),
			BatchWait:     k.Duration("BATCH_WAIT"),
			QueueCapacity: k.Int("QUEUE_CAPACITY"),
			EnqueueWait:   k.Duration("ENQUEUE_WAIT"),
			PriceWorkers:  runtime.GOMAXPROCS(0),
			CommitTimeout: k.Duration("REQUEST_TIMEOUT"),
			AuditWorkers:  k.Int("AUDIT_WORKERS"),
			AuditQueue:    k.Int("AUDIT_QUEUE"),
			Audit:         d.Audit,
		}, d.Store, d.Log, met, d.Tracer)
		if err != nil {
			return nil, err // not a nil *Pipeline in a non-nil Model
		}
		return p, nil
	}, nil
}
