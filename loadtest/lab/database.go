package lab

import (
	"context"
	"fmt"
	"net/url"
	"regexp"

	"github.com/jackc/pgx/v5"
)

// Database is a database created for one scenario run.
type Database struct {
	Name  string
	URL   string // the admin URL with the path replaced by Name
	admin string
}

var dbName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,62}$`)

// CreateDatabase creates the database name on the server adminURL points at
// (a URL whose user may CREATE DATABASE), dropping a leftover of the same name
// first.
func CreateDatabase(ctx context.Context, adminURL, name string) (*Database, error) {
	if !dbName.MatchString(name) {
		return nil, fmt.Errorf("database name %q: want lower-case letters, digits and _", name)
	}
	u, err := url.Parse(adminURL)
	if err != nil {
		return nil, fmt.Errorf("database URL: %w", err)
	}
	u.Path = "/" + name
	d := &Database{Name: name, URL: u.String(), admin: adminURL}
	if err := d.exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
		return nil, err
	}
	if err := d.exec(ctx, "CREATE DATABASE "+name); err != nil {
		return nil, err
	}
	return d, nil
}

// Drop drops the database, closing any connection still open to it.
func (d *Database) Drop(ctx context.Context) error {
	return d.exec(ctx, "DROP DATABASE IF EXISTS "+d.Name+" WITH (FORCE)")
}

func (d *Database) exec(ctx context.Context, sql string) error {
	conn, err := pgx.Connect(ctx, d.admin)
	if err != nil {
		return fmt.Errorf("connecting to Postgres (%s): %w", redact(d.admin), err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("%s: %w", sql, err)
	}
	return nil
}

// redact hides the password of a database URL.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// FreeConnections is how many more connections the server accepts from
// ordinary users now: max_connections minus the reserved ones minus those open.
func FreeConnections(ctx context.Context, adminURL string) (int, error) {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return 0, fmt.Errorf("connecting to Postgres (%s): %w", redact(adminURL), err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var free int
	err = conn.QueryRow(ctx, `SELECT current_setting('max_connections')::int
		- current_setting('superuser_reserved_connections')::int
		- (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend')`).Scan(&free)
	return free, err
}
