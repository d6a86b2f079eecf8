// Command semaphore is the order service that bounds database access with a
// limit in front of the pool: the Go counterpart of virtual threads guarded
// by Semaphore(25). The limit is fixed (LIMIT=n, x/sync/semaphore) or
// adaptive (LIMIT=adaptive: it finds the pool's capacity from the pool's
// own acquire waits). A request takes its permit before its body is read,
// waits at most LIMIT_WAIT for one and is then rejected with 429 and a
// Retry-After, so overload never reaches the pool and a rejection costs no
// decoding. Its model is services/internal/direct's, limited.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/orderlab/orderlab/services/internal/app"
	"github.com/orderlab/orderlab/services/internal/direct"
	"github.com/orderlab/orderlab/services/internal/knob"
	"github.com/orderlab/orderlab/services/internal/limiter"
	"github.com/orderlab/orderlab/services/internal/limitermetrics"
	"github.com/orderlab/orderlab/services/internal/model"
)

func main() {
	if err := app.Run(context.Background(), service, os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "semaphore:", err)
		os.Exit(1)
	}
}

var service = app.Service{Model: "semaphore", Start: start}

// start registers the limiter's metrics, and builds each model from LIMIT
// (default DB_MAX_CONNS, or adaptive), LIMIT_WAIT, LIMIT_ORDER and, for the
// adaptive limit, LIMIT_MIN and LIMIT_MAX (services/internal/knob). The
// adaptive limit watches the store's pool (limiter.Config.PoolWaits).
func start(d app.Deps) (app.Build, error) {
	met, err := limitermetrics.New(d.Registry)
	if err != nil {
		return nil, err
	}
	poolWaits := func() limiter.PoolWaits {
		acquires, waited, waitTime := d.Store.AcquireWaits()
		return limiter.PoolWaits{Acquires: acquires, Waited: waited, WaitTime: waitTime}
	}
	return func(k *knob.Set) (model.Model, error) {
		lim, err := limiter.New(limiter.Config{
			Permits: k.Int("LIMIT"), Adaptive: k.Word("LIMIT"), Wait: k.Duration("LIMIT_WAIT"),
			NewestFirst: k.Text("LIMIT_ORDER") == "lifo", Min: k.Int("LIMIT_MIN"), Max: k.Int("LIMIT_MAX"),
			PoolWaits: poolWaits,
		}, met)
		if err != nil {
			return nil, err
		}
		return direct.Limited(d.Store, func(ctx context.Context) (direct.Permit, error) {
			p, err := lim.Acquire(ctx)
			if err != nil {
				return nil, err // not a nil *Permit in a non-nil Permit
			}
			return p, nil
		}, d.Audit), nil
	}, nil
}
