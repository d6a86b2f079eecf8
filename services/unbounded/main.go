// Command unbounded is the order service in which every request's goroutine
// goes straight to the pgx pool: the Go counterpart of Java's virtual
// threads. Nothing bounds concurrency before the pool, so under overload the
// goroutines queue inside pgxpool.Acquire until REQUEST_TIMEOUT, and the
// pool wait dominates latency. Its model is services/internal/direct's,
// unlimited.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/orderlab/orderlab/services/internal/app"
	"github.com/orderlab/orderlab/services/internal/direct"
	"github.com/orderlab/orderlab/services/internal/knob"
	"github.com/orderlab/orderlab/services/internal/model"
)

func main() {
	if err := app.Run(context.Background(), service, os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "unbounded:", err)
		os.Exit(1)
	}
}

var service = app.Service{Model: "unbounded", Start: start}

// start: the unbounded model has no knobs of its own; DB_MAX_CONNS and
// REQUEST_TIMEOUT are all that shape it.
func start(d app.Deps) (app.Build, error) {
	return func(*knob.Set) (model.Model, error) { return direct.Unlimited(d.Store, d.Audit), nil }, nil
}
