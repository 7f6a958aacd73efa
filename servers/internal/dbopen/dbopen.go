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
	"os"
	"path/filepath"
	"time"

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
		// The caller names the database in its errors (stack.Open: "pam
		// database: ..."), so they carry no prefix of the schema here.
		return pgdb.OpenWith(ctx, t.URL, s.Name, s.Postgres, pgdb.Options{MaxConns: t.MaxConns})
	}
	if s.SQLite == nil {
		return nil, fmt.Errorf("%s database: no SQLite migrations", s.Name)
	}
	path := filepath.Join(t.DataDir, s.Name+".db")
	if err := refuseEmpty(path, filepath.Join(t.DataDir, s.Name+"-master.key"), t.DataDir); err != nil {
		return nil, err
	}
	return sqlitedb.Open(ctx, path, s.SQLite, sqlitedb.WithFullSync(t.SQLiteFullSync), sqlitedb.WithQuickCheck(QuickCheckTime))
}

// QuickCheckTime bounds the integrity check of each SQLite database at
// start (PRAGMA quick_check): a database larger than it can check in that
// time starts unchecked.
var QuickCheckTime = 5 * time.Second

// refuseEmpty refuses a database file of zero bytes when something in the
// data directory shows the stack has run there before: the API's key file
// beside it (made with the data that is now gone), or another API's
// database holding data. SQLite writes its first page as the migrations
// run, so the stack never leaves a database of zero bytes; one that is
// empty was truncated or replaced, and SQLite would start it afresh as a
// new, empty database, every account and secret lost without a word (and
// the demo credentials file rewritten with keys that replace the old ones).
func refuseEmpty(path, keyFile, dataDir string) error {
	info, err := os.Stat(path)
	if err != nil || info.Size() != 0 || !info.Mode().IsRegular() {
		return nil // missing (a new data directory), or not empty
	}
	if _, err := os.Stat(keyFile); err == nil {
		return fmt.Errorf("%s is empty (0 bytes) but %s, made with its data, exists: the database was truncated or replaced; "+
			"restore %s from a backup, or move both files away to start with new, empty data", path, keyFile, path)
	}
	if other := usedDatabase(dataDir, path); other != "" {
		return fmt.Errorf("%s is empty (0 bytes) but %s beside it holds data: the database was truncated or replaced; "+
			"restore %s from a backup, or remove it to start this API with new, empty data", path, other, path)
	}
	return nil
}

// usedDatabase returns another SQLite database in dir than path that holds
// data, or "" when there is none.
func usedDatabase(dir, path string) string {
	others, err := filepath.Glob(filepath.Join(dir, "*.db"))
	if err != nil {
		return ""
	}
	for _, other := range others {
		if other == path {
			continue
		}
		if info, err := os.Stat(other); err == nil && info.Mode().IsRegular() && info.Size() > 0 {
			return other
		}
	}
	return ""
}
