// Command pgcheck exits 1 with advice when the tests' Postgres
// (TEST_DATABASE_URL) is unreachable, so that `make test` fails at once
// instead of in every test.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/orderlab/orderlab/internal/pgtest"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := pgtest.Check(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "make test:", err)
		os.Exit(1)
	}
}
