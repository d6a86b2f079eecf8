// Command loadtest is orderlab's load generator: a black-box HTTP client that
// reproduces the experiments of docs REFERENCE.md against the three services
// (burst, closed loop, coordinated-omission-correct open loop, and a
// comparison of several targets), and reports client- and server-side
// figures. See loadtest/README.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
