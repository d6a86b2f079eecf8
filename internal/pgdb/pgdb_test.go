package pgdb_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/orderlab/orderlab/internal/pgdb"
	"github.com/orderlab/orderlab/internal/pgtest"
)

func count(t *testing.T, rawURL, query string, args ...any) int {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, rawURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// Create replaces a leftover of the same name with an empty database, and
// Drop removes it even while a connection to it is open.
func TestCreateReplacesALeftoverAndDropRemovesIt(t *testing.T) {
	ctx := context.Background()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "orderlab_pgdb_" + hex.EncodeToString(b)
	admin := pgtest.BaseURL()

	first, err := pgdb.Create(ctx, admin, name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = first.Drop(context.Background()) })
	if first.Name != name {
		t.Errorf("Name = %q, want %q", first.Name, name)
	}
	conn, err := pgx.Connect(ctx, first.URL)
	if err != nil {
		t.Fatalf("connect to %s: %v", first.URL, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE TABLE leftover (id int)"); err != nil {
		t.Fatal(err)
	}

	// The connection above stays open: FORCE closes it.
	second, err := pgdb.Create(ctx, admin, name)
	if err != nil {
		t.Fatal(err)
	}
	if n := count(t, second.URL, "SELECT count(*) FROM information_schema.tables WHERE table_name = 'leftover'"); n != 0 {
		t.Errorf("the leftover's table survived Create")
	}
	if err := second.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	if n := count(t, admin, "SELECT count(*) FROM pg_database WHERE datname = $1", name); n != 0 {
		t.Errorf("database %s still exists after Drop", name)
	}
}

func TestCreateRejectsNamesThatAreNotPlainIdentifiers(t *testing.T) {
	for _, name := range []string{"", "Upper", "1st", "a-b", "a;DROP DATABASE postgres", "a234567890123456789012345678901234567890123456789012345678901234"} {
		if _, err := pgdb.Create(context.Background(), pgtest.BaseURL(), name); err == nil {
			t.Errorf("Create(%q) succeeded", name)
		}
	}
}

// FreeConnections is the server's room for ordinary users: at least the
// connection the test is about to open, at most max_connections.
func TestFreeConnections(t *testing.T) {
	free, err := pgdb.FreeConnections(context.Background(), pgtest.BaseURL())
	if err != nil {
		t.Fatal(err)
	}
	maxConns := count(t, pgtest.BaseURL(), "SELECT current_setting('max_connections')::int")
	if free < 1 || free > maxConns {
		t.Errorf("FreeConnections = %d, want between 1 and max_connections (%d)", free, maxConns)
	}
}

func TestPingNamesTheServerWithoutItsPassword(t *testing.T) {
	err := pgdb.Ping(context.Background(), "postgres://u:secret@127.0.0.1:1/x?connect_timeout=5")
	if err == nil {
		t.Fatal("Ping of a closed port succeeded")
	}
	if msg := err.Error(); !strings.Contains(msg, "127.0.0.1:1") || strings.Contains(msg, "secret") {
		t.Errorf("error %q: want the server named and the password hidden", msg)
	}
}
