package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"log/slog"
	"sort"

	"github.com/jackc/pgx/v5"
)

//go:embed migrations/*.sql
var migrations embed.FS

// migrationLock is the advisory-lock key that serialises migrations when the
// three services start against one database at the same time.
const migrationLock int64 = 0x6f726465726c6162 // "orderlab"

// Migrate applies every embedded migration that the database has not seen,
// each in its own transaction, under a transaction-level advisory lock
// (pg_advisory_xact_lock) that each transaction takes first and the commit
// releases. A session lock (pg_advisory_lock) would break behind a
// transaction-mode pooler such as PgBouncer: the lock, the migrations and
// the unlock could each run on a different server connection, and the lock
// would stay held on one of them, blocking the next service's start
// (docs/scenarios: too-many-clients).
//
// It is hand-written rather than taken from tern or golang-migrate: the
// services need forward-only plain SQL files, one lock and one bookkeeping
// table, and those libraries bring template engines and driver registries
// for it.
func Migrate(ctx context.Context, conn *pgx.Conn, log *slog.Logger) error {
	lock := func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", migrationLock)
		if err != nil {
			return fmt.Errorf("take migration lock: %w", err)
		}
		return nil
	}
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if err := lock(tx); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    text PRIMARY KEY,
		applied_at timestamptz NOT NULL DEFAULT now())`)
		return err
	})
	if err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}

	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	for _, name := range names {
		sql, err := migrations.ReadFile(name)
		if err != nil {
			return err
		}
		applied := false
		err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if err := lock(tx); err != nil {
				return err
			}
			var done bool
			if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE version = $1)", name).Scan(&done); err != nil {
				return fmt.Errorf("read schema_migrations: %w", err)
			}
			if done {
				return nil
			}
			if _, err := tx.Exec(ctx, string(sql)); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version) VALUES ($1)", name)
			applied = err == nil
			return err
		})
		if err != nil {
			return fmt.Errorf("apply %s: %w", name, err)
		}
		if applied {
			log.Info("migration applied", "version", name)
		}
	}
	return nil
}
