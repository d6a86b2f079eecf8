package pgtest_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/orderlab/orderlab/internal/pgtest"
)

func connect(t *testing.T, rawURL string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), rawURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// New hands out an empty database that the test may write to, and drops it
// when the test ends.
func TestNewGivesAnEmptyDatabaseDroppedAtTheEnd(t *testing.T) {
	var dbURL string
	t.Run("test", func(t *testing.T) {
		dbURL = pgtest.New(t)
		conn := connect(t, dbURL)
		var tables int
		if err := conn.QueryRow(context.Background(),
			"SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'").Scan(&tables); err != nil {
			t.Fatal(err)
		}
		if tables != 0 {
			t.Errorf("new database has %d tables, want none", tables)
		}
		if _, err := conn.Exec(context.Background(), "CREATE TABLE t (id int)"); err != nil {
			t.Errorf("the test may not write to its database: %v", err)
		}
		if other := pgtest.New(t); other == dbURL {
			t.Errorf("two calls gave the same database %s", other)
		}
	})
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	var n int
	if err := connect(t, pgtest.BaseURL()).QueryRow(context.Background(),
		"SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("database %s still exists after its test ended", name)
	}
}
