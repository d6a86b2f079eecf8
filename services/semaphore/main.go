// Command semaphore is the order service that bounds database access with a
// limit in front of the pool: the Go counterpart of virtual threads guarded
// by Semaphore(25). The limit is fixed (LIMIT=n, x/sync/semaphore) or
// adaptive (LIMIT=adaptive: it finds the pool's capacity from the pool's
// own acquire waits). A
// request takes its permit before its body is read, waits at most
// LIMIT_WAIT for one and is then rejected with 429 and a Retry-After, so
// overload never reaches the pool and a rejection costs no decoding. Its
// model is services/internal/direct's, limited.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/orderlab/orderlab/services/internal/app"
	"github.com/orderlab/orderlab/services/internal/direct"
	"github.com/orderlab/orderlab/services/internal/limiter"
	"github.com/orderlab/orderlab/services/internal/model"
)

func main() {
	if err := app.Run(context.Background(), service, os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "semaphore:", err)
		os.Exit(1)
	}
}

var service = app.Service{Model: "semaphore", Configure: configure}

// configure reads LIMIT (default DB_MAX_CONNS, or adaptive), LIMIT_WAIT
// (default 100ms) and, for the adaptive limit, LIMIT_MIN (1) and LIMIT_MAX
// (200).
func configure(env *app.Env, cfg app.Config) app.Builder {
	var lc limiter.Config
	lc.Permits, lc.Adaptive = env.IntOr("LIMIT", "adaptive", cfg.DBMaxConns, 1, 100_000)
	lc.Wait = env.Duration("LIMIT_WAIT", 100*time.Millisecond, 0, time.Minute)
	if lc.Adaptive {
		lc.Min = env.Int("LIMIT_MIN", 1, 1, 100_000)
		lc.Max = env.Int("LIMIT_MAX", 200, 1, 100_000)
		if lc.Min > lc.Max {
			env.Fail("LIMIT_MIN=%d: want at most LIMIT_MAX (%d)", lc.Min, lc.Max)
		}
	}
	return func(d app.Deps) (model.Model, error) {
		lc.PoolWaits = func() limiter.PoolWaits {
			acquires, waited, waitTime := d.Store.AcquireWaits()
			return limiter.PoolWaits{Acquires: acquires, Waited: waited, WaitTime: waitTime}
		}
		lim, err := limiter.New(lc, d.Registry, d.Tracer)
		if err != nil {
			return nil, err
		}
		return direct.Limited(d.Store, lim, d.Audit), nil
	}
}
