// Package dbopen chooses and opens an API's database for `apistack serve`:
// the SQLite file <data-dir>/<api>.db (the embedded default), or the API's
// schema in a PostgreSQL database shared by every replica (--database).
package dbopen

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/apistack/apistack/servers/internal/pgdb"
	"github.com/apistack/apistack/servers/internal/sqlitedb"
)

// Target is where the stack keeps its state.
type Target struct {
	// URL is a PostgreSQL URL (postgres://…) or key=value connection
	// string; empty means SQLite files in DataDir.
	URL string
	// DataDir holds the SQLite files when URL is empty.
	DataDir string
	// SQLiteFullSync flushes every SQLite commit to the disk.
	SQLiteFullSync bool
	// MaxConns bounds each API's PostgreSQL connections per replica
	// (0: pgdb.DefaultMaxConns).
	MaxConns int
}

// Shared reports whether the target is a database other replicas may use
// too (PostgreSQL).
func (t Target) Shared() bool { return t.URL != "" }

// Schema is one API's tables: its name (the PostgreSQL schema and the SQLite
// file's base name) and its migrations in each dialect.
type Schema struct {
	Name             string
	SQLite, Postgres fs.FS
}

// Open opens s on t and applies the migrations not yet applied (on
// PostgreSQL once, however many replicas start together).
func Open(ctx context.Context, t Target, s Schema) (*sql.DB, error) {
	if s.Name == "" {
		return nil, errors.New("dbopen: the schema has no name")
	}
	if t.Shared() {
		if s.Postgres == nil {
			return nil, fmt.Errorf("%s database: no PostgreSQL migrations", s.Name)
		}
		db, err := pgdb.OpenWith(ctx, t.URL, s.Name, s.Postgres, pgdb.Options{MaxConns: t.MaxConns})
		if err != nil {
			return nil, fmt.Errorf("%s database: %w", s.Name, err)
		}
		return db, nil
	}
	if s.SQLite == nil {
		return nil, fmt.Errorf("%s database: no SQLite migrations", s.Name)
	}
	db, err := sqlitedb.Open(ctx, filepath.Join(t.DataDir, s.Name+".db"), s.SQLite, sqlitedb.WithFullSync(t.SQLiteFullSync))
	if err != nil {
		return nil, fmt.Errorf("%s database: %w", s.Name, err)
	}
	return db, nil
}
