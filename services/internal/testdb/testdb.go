// Package testdb gives each test a fresh, empty Postgres database of its
// own, dropped when the test ends, so that tests never see each other's rows.
package testdb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// DefaultURL is used when TEST_DATABASE_URL is unset.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// BaseURL is the server the tests use: TEST_DATABASE_URL or DefaultURL.
func BaseURL() string {
	if u := os.Getenv("TEST_DATABASE_URL"); u != "" {
		return u
	}
	return DefaultURL
}

// Check says whether the test server answers, with a message that says how
// to provide one when it does not.
func Check(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, BaseURL())
	if err != nil {
		return fmt.Errorf("postgres is not reachable at TEST_DATABASE_URL=%q: %w\n"+
			"The tests need a real Postgres. Start one (e.g. `pg_ctlcluster 15 main start`, or "+
			"`docker run -p 127.0.0.1:5432:5432 -e POSTGRES_HOST_AUTH_METHOD=trust postgres:17`) "+
			"or point TEST_DATABASE_URL at a server where the user may CREATE DATABASE", BaseURL(), err)
	}
	return conn.Close(ctx)
}

// New creates an empty database for t and returns its URL. The database is
// dropped (with FORCE, closing leftover connections) when t ends. New fails
// t, never skips it, when Postgres is unreachable.
func New(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := Check(ctx); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, BaseURL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())

	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "orderlab_test_" + hex.EncodeToString(b)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, BaseURL())
		if err != nil {
			t.Errorf("drop test database %s: %v", name, err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop test database %s: %v", name, err)
		}
	})

	u, err := url.Parse(BaseURL())
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}
