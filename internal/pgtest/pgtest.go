// Package pgtest gives each test a fresh, empty Postgres database of its
// own, dropped when the test ends, so that tests never see each other's
// rows. The server is TEST_DATABASE_URL's (default pgdb.DefaultURL): a
// Postgres the tests may CREATE DATABASE on. A test that cannot reach it
// fails; it never skips.
//
// Creating and dropping databases is pgdb's, running a private cluster
// pgcluster's and a proxy with network faults faultproxy's; this package
// adds the test side: testing.TB, t.Cleanup and the advice to print when
// there is no server.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/orderlab/orderlab/internal/pgcluster"
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
	return NewOn(t, BaseURL())
}

// NewOn is New on the server adminURL points at (a Cluster's URL).
func NewOn(t testing.TB, adminURL string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	db, err := pgdb.Create(ctx, adminURL, "orderlab_test_"+hex.EncodeToString(b))
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

// NewCluster starts a throwaway PostgreSQL cluster of t's own (initdb and
// pg_ctl, see pgcluster), for a test that stops or restarts its server. It
// is destroyed when t ends. It fails t when no PostgreSQL binaries are
// installed. Tests that can share one should: initdb takes seconds. settings
// are the server's beyond pgcluster's defaults ("max_connections=200").
func NewCluster(t testing.TB, settings ...string) *pgcluster.Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := pgcluster.New(ctx, settings...)
	if err != nil {
		t.Fatalf("start a throwaway Postgres cluster: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := c.Destroy(ctx); err != nil {
			t.Errorf("destroy the throwaway cluster: %v\nserver log: %s", err, c.Log())
		}
	})
	return c
}
