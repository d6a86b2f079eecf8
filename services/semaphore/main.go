// Command semaphore is the order service that bounds database access with a
// weighted semaphore (golang.org/x/sync/semaphore) of LIMIT permits in front
// of the pool: the Go counterpart of virtual threads guarded by
// Semaphore(25). A request waits at most LIMIT_WAIT for a permit and is then
// rejected with 429 and Retry-After, so overload never reaches the pool.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/orderlab/orderlab/services/internal/app"
	"github.com/orderlab/orderlab/services/internal/limiter"
)

func main() {
	if err := app.Run(context.Background(), service, os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "semaphore:", err)
		os.Exit(1)
	}
}

var service = app.Service{Model: "semaphore", Configure: configure}

// configure reads LIMIT (default DB_MAX_CONNS) and LIMIT_WAIT (default 100ms).
func configure(env *app.Env, cfg app.Config) app.Builder {
	permits := env.Int("LIMIT", cfg.DBMaxConns, 1, 100_000)
	wait := env.Duration("LIMIT_WAIT", 100*time.Millisecond, 0, time.Minute)
	return func(d app.Deps) (app.Model, error) {
		lim, err := limiter.New(int64(permits), wait, d.Registry, d.Tracer)
		if err != nil {
			return nil, err
		}
		return model{store: d.Store, limiter: lim, audit: d.Audit}, nil
	}
}
