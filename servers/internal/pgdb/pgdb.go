// Package pgdb opens a service's tables in a PostgreSQL database, the
// scale-out engine: every API keeps its tables in its own schema (pam, fax,
// storage, restaurant, admin), so one database serves the whole stack and the
// APIs stay separable, and its migrations (goose, the PostgreSQL set) are
// applied once however many replicas start together.
package pgdb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"runtime"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

// DefaultMaxConns is how many connections a replica keeps per API unless
// told otherwise (Options.MaxConns, serve's --database-max-conns): twice the
// CPUs, at least 4 and at most 8. PostgreSQL runs a process per connection,
// so a replica keeps few, and several replicas of five APIs stay well under
// the default max_connections (100). Measured in BenchmarkPoolSize (see
// docs/scale-out-benchmarks.md): on 2 cores a PAM list replica gains
// nothing beyond 4, and concurrent creates of 16 teams nothing beyond 8.
var DefaultMaxConns = min(max(2*runtime.GOMAXPROCS(0), 4), 8)

// Options tunes a pool.
type Options struct {
	// MaxConns bounds the pool's connections (idle ones included); 0 means
	// DefaultMaxConns.
	MaxConns int
}

var schemaName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,62}$`)

// Open opens the PostgreSQL database at url (a postgres:// URL or a
// key=value connection string, as pgx reads them) for the API whose tables
// live in schema: the schema is created when missing, every connection's
// search_path is the schema alone, and the migrations not yet applied are,
// under a session advisory lock, so replicas started together wait for the
// first one instead of racing it.
func Open(ctx context.Context, url, schema string, migrations fs.FS) (*sql.DB, error) {
	return OpenWith(ctx, url, schema, migrations, Options{})
}

// OpenWith is Open with a pool tuned by opts. pgx's statement cache is
// tuned in url, as pgx reads it (statement_cache_capacity,
// default_query_exec_mode).
func OpenWith(ctx context.Context, url, schema string, migrations fs.FS, opts Options) (*sql.DB, error) {
	poolSize := opts.MaxConns
	if poolSize <= 0 {
		poolSize = DefaultMaxConns
	}
	if !schemaName.MatchString(schema) {
		return nil, fmt.Errorf("pgdb: schema name %q: want lower-case letters, digits and _", schema)
	}
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("database URL: %w", err)
	}
	cfg.RuntimeParams["search_path"] = schema
	// Every connection of this pool names the pool, so the commit
	// notifications its own writes cause are told from other replicas'
	// (see Watch).
	cfg.RuntimeParams[replicaParam] = rand.Text()
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(poolSize)
	db.SetMaxIdleConns(poolSize)
	db.SetConnMaxIdleTime(5 * time.Minute)
	if err := db.PingContext(ctx); err != nil {
		return nil, errors.Join(fmt.Errorf("connect to PostgreSQL: %w", err), db.Close())
	}
	if err := createSchema(ctx, db, schema); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	if err := Migrate(ctx, db, migrations); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	if err := installNotify(ctx, db, schema); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	return db, nil
}

// createSchema creates schema when it is missing. Two sessions running
// CREATE SCHEMA IF NOT EXISTS at once can both miss it and one then fails on
// the catalog's unique index; a transaction-scoped advisory lock queues them.
func createSchema(ctx context.Context, db *sql.DB, schema string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("create schema %s: %w", schema, err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtext('apistack: create schema'))`); err != nil {
		return fmt.Errorf("create schema %s: %w", schema, err)
	}
	if _, err := tx.ExecContext(ctx, `CREATE SCHEMA IF NOT EXISTS `+pgx.Identifier{schema}.Sanitize()); err != nil {
		return fmt.Errorf("create schema %s: %w", schema, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("create schema %s: %w", schema, err)
	}
	return nil
}

// Migrate applies the pending migrations of migrations (goose SQL files for
// PostgreSQL) to the schema of db's search_path, holding a session advisory
// lock while it does.
func Migrate(ctx context.Context, db *sql.DB, migrations fs.FS) error {
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockTimeout(1, 120))
	if err != nil {
		return fmt.Errorf("migration lock: %w", err)
	}
	provider, err := goose.NewProvider(goose.DialectPostgres, db, migrations, goose.WithSessionLocker(locker))
	if err != nil {
		return fmt.Errorf("load migrations: %w", err)
	}
	if _, err := provider.Up(ctx); err != nil {
		return fmt.Errorf("apply migrations: %w", err)
	}
	return nil
}
