// Package pgtest gives each test a fresh, empty Postgres database of its
// own, dropped when the test ends, so that tests never see each other's
// rows. The server is TEST_DATABASE_URL's (default pgdb.DefaultURL): a
// Postgres the tests may CREATE DATABASE on. A test that cannot reach it
// fails; it never skips.
//
// Creating and dropping databases is pgdb's; this package adds the test
// side: testing.TB, t.Cleanup and the advice to print when there is no
// server. Other throwaway servers for tests (a private cluster, a proxy in
// front of one) belong here too, beside New.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/orderlab/orderlab/internal/pgdb"
)

// BaseURL is the server the tests use: TEST_DATABASE_URL or pgdb.DefaultURL.
func BaseURL() string {
	if u := os.Getenv("TEST_DATABASE_URL"); u != "" {
		return u
	}
	return pgdb.DefaultURL
}

// Check says whether the tests' server answers, with a message that says
// how to provide one when it does not.
func Check(ctx context.Context) error {
	if err := pgdb.Ping(ctx, BaseURL()); err != nil {
		return fmt.Errorf("postgres is not reachable at TEST_DATABASE_URL: %w\n"+
			"The tests need a real Postgres. Start one (e.g. `pg_ctlcluster 15 main start`, or "+
			"`docker run -p 127.0.0.1:5432:5432 -e POSTGRES_HOST_AUTH_METHOD=trust postgres:17`) "+
			"or point TEST_DATABASE_URL at a server where the user may CREATE DATABASE", err)
	}
	return nil
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
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	db, err := pgdb.Create(ctx, BaseURL(), "orderlab_test_"+hex.EncodeToString(b))
	if err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := db.Drop(ctx); err != nil {
			t.Errorf("drop test database %s: %v", db.Name, err)
		}
	})
	return db.URL
}
