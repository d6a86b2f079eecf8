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
	"time"

	"github.com/orderlab/orderlab/services/internal/app"
	"github.com/orderlab/orderlab/services/internal/model"
	"github.com/orderlab/orderlab/services/internal/pipeline"
)

func main() {
	if err := app.Run(context.Background(), service, os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "pipeline:", err)
		os.Exit(1)
	}
}

var service = app.Service{Model: "pipeline", Configure: configure}

// configure reads WORKERS (default DB_MAX_CONNS), BATCH_MAX (64), BATCH_WAIT
// (2ms), QUEUE_CAPACITY (1024), ENQUEUE_WAIT (0: reject at once), and for
// the audit stage AUDIT_WORKERS (4) and AUDIT_QUEUE (256).
func configure(env *app.Env, cfg app.Config) app.Builder {
	pc := pipeline.Config{
		Workers:       env.Int("WORKERS", cfg.DBMaxConns, 1, 10_000),
		BatchMax:      env.Int("BATCH_MAX", 64, 1, 1_000),
		BatchWait:     env.Duration("BATCH_WAIT", 2*time.Millisecond, 0, time.Second),
		QueueCapacity: env.Int("QUEUE_CAPACITY", 1024, 1, 1_000_000),
		EnqueueWait:   env.Duration("ENQUEUE_WAIT", 0, 0, time.Minute),
		PriceWorkers:  runtime.GOMAXPROCS(0),
		CommitTimeout: cfg.API.RequestTimeout,
		AuditWorkers:  env.Int("AUDIT_WORKERS", 4, 1, 10_000),
		AuditQueue:    env.Int("AUDIT_QUEUE", 256, 1, 1_000_000),
	}
	if pc.Workers > cfg.DBMaxConns {
		env.Fail("WORKERS=%d: want at most DB_MAX_CONNS (%d); extra workers would only wait for the pool", pc.Workers, cfg.DBMaxConns)
	}
	return func(d app.Deps) (model.Model, error) {
		pc.Audit = d.Audit
		p, err := pipeline.New(pc, d.Store, d.Log, d.Registry, d.Tracer)
		if err != nil {
			return nil, err // not a nil *Pipeline in a non-nil Model
		}
		return p, nil
	}
}
