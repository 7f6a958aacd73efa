package testkit

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/sqlitedb"
)

// SQLite opens a SQLite database of one table, t (x INTEGER), in a
// temporary directory, and closes it when the test ends.
func SQLite(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sqlitedb.Open(context.Background(), filepath.Join(t.TempDir(), "t.db"), fstest.MapFS{
		"00001_init.sql": {Data: []byte("-- +goose Up\nCREATE TABLE t (x INTEGER);\n")},
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// RefuseWrites makes every write to db fail while a ping still answers, as
// on a full disk: one connection, made read-only. allow undoes it.
func RefuseWrites(t testing.TB, db *sql.DB) (allow func()) {
	t.Helper()
	ctx := context.Background()
	db.SetMaxOpenConns(1)
	_, err := db.ExecContext(ctx, "PRAGMA query_only = 1")
	require.NoError(t, err)
	require.NoError(t, db.PingContext(ctx))
	return func() {
		_, err := db.ExecContext(ctx, "PRAGMA query_only = 0")
		require.NoError(t, err)
	}
}
