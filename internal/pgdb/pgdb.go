// Package pgdb creates and drops whole Postgres databases, so that every run
// gets an empty database of its own, and names the local server that every
// default points at (DefaultURL).
//
// It serves two kinds of callers with the same core: the scenario runner
// (lab/local), which creates orderlab_scn_<name> at run time and checks
// that the server has room for a service's pool, and the tests, through
// internal/pgtest, which adds what only a test needs (testing.TB, t.Cleanup,
// TEST_DATABASE_URL). Keeping the SQL here, outside any test package, is
// what lets a command use it; keeping testing out of it is what keeps the
// testing package out of the binaries.
package pgdb

import (
	"context"
	"fmt"
	"net/url"
	"regexp"

	"github.com/jackc/pgx/v5"
)

// DefaultURL is the Postgres of a local install (trust auth, user postgres)
// that the services, the scenario runner and the tests use when no URL is
// given.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// Database is a database created on a server for one run.
type Database struct {
	Name  string
	URL   string // the admin URL with the path replaced by Name
	admin string
}

var validName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,62}$`)

// Create creates the database name on the server adminURL points at (a
// connection string, URL or keyword/value, whose user may CREATE
// DATABASE), dropping a leftover of the same name first.
func Create(ctx context.Context, adminURL, name string) (*Database, error) {
	if !validName.MatchString(name) {
		return nil, fmt.Errorf("database name %q: want lower-case letters, digits and _", name)
	}
	dbURL := adminURL + " dbname=" + name // keyword/value: the last dbname wins
	if formOf(adminURL) == "URL" {
		u, err := url.Parse(adminURL)
		if err != nil {
			return nil, fmt.Errorf("database URL: %s", Describe(adminURL))
		}
		u.Path = "/" + name
		dbURL = u.String()
	}
	d := &Database{Name: name, URL: dbURL, admin: adminURL}
	if err := d.exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)", "CREATE DATABASE "+name); err != nil {
		return nil, err
	}
	return d, nil
}

// Drop drops the database, closing any connection still open to it.
func (d *Database) Drop(ctx context.Context) error {
	return d.exec(ctx, "DROP DATABASE IF EXISTS "+d.Name+" WITH (FORCE)")
}

// exec runs statements in turn on one connection to the admin URL.
func (d *Database) exec(ctx context.Context, statements ...string) error {
	conn, err := connect(ctx, d.admin)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	for _, sql := range statements {
		if _, err := conn.Exec(ctx, sql); err != nil {
			return fmt.Errorf("%s: %w", sql, err)
		}
	}
	return nil
}

// FreeConnections is how many more connections the server accepts from
// ordinary users now: max_connections minus the reserved ones minus those open.
func FreeConnections(ctx context.Context, adminURL string) (int, error) {
	conn, err := connect(ctx, adminURL)
	if err != nil {
		return 0, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var free int
	err = conn.QueryRow(ctx, `SELECT current_setting('max_connections')::int
		- current_setting('superuser_reserved_connections')::int
		- (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend')`).Scan(&free)
	return free, err
}

// Ping connects to the server rawURL points at and disconnects.
func Ping(ctx context.Context, rawURL string) error {
	conn, err := connect(ctx, rawURL)
	if err != nil {
		return err
	}
	return conn.Close(ctx)
}

// connect opens one connection; its error names the server (Describe),
// never a password. A string that does not parse is not wrapped: pgx's
// parse error quotes it.
func connect(ctx context.Context, rawURL string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(rawURL)
	if err != nil {
		return nil, fmt.Errorf("connecting to Postgres: %s", Describe(rawURL))
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to Postgres (%s): %w", Describe(rawURL), err)
	}
	return conn, nil
}
