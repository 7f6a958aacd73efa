package testdb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apistack/apistack/servers/internal/pgdb"
	"github.com/apistack/apistack/servers/internal/sqlitedb"
)

// OpenTwice returns a fresh, migrated database for one API on the current
// backend, as Open does, and a function that opens another handle on the
// same database (the same SQLite file, the same PostgreSQL schema): two
// servers sharing one database as replicas do, or a server restarted on the
// database of the one before. Every handle is closed, and the PostgreSQL
// schema dropped, when t ends.
func OpenTwice(t testing.TB, m Migrations) (*sql.DB, func() *sql.DB) {
	t.Helper()
	var open func() (*sql.DB, error)
	switch Current() {
	case SQLite:
		path := filepath.Join(t.TempDir(), m.Schema+".db")
		open = func() (*sql.DB, error) { return sqlitedb.Open(context.Background(), path, m.SQLite) }
	default:
		base := PostgresURL(t)
		schema := m.Schema + "_" + strings.ToLower(rand.Text()[:10])
		t.Cleanup(func() { dropSchema(base, schema) })
		open = func() (*sql.DB, error) { return pgdb.Open(context.Background(), base, schema, m.Postgres) }
	}
	reopen := func() *sql.DB {
		t.Helper()
		db, err := open()
		if err != nil {
			t.Fatalf("testdb: %v", err)
		}
		t.Cleanup(func() { _ = db.Close() })
		return db
	}
	return reopen(), reopen
}
