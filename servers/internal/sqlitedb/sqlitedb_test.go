package sqlitedb_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/sqlitedb"
	"github.com/apistack/apistack/servers/internal/testkit"
)

var migrations = fstest.MapFS{
	"00001_notes.sql": {Data: []byte("-- +goose Up\nCREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL);\n")},
}

// requirePrivate checks that every file of the database in dir is 0600 and
// that the WAL files exist (so the check covers them).
func requirePrivate(t *testing.T, path string) {
	t.Helper()
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		info, err := os.Stat(p)
		require.NoError(t, err, "%s exists while the database is open in WAL mode", filepath.Base(p))
		assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), filepath.Base(p))
	}
}

func TestOpen_DatabaseFilesAreOwnerOnly(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "data", "api.db")
	db, err := sqlitedb.Open(ctx, path, migrations)
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, "INSERT INTO notes (body) VALUES ('secret')")
	require.NoError(t, err)
	requirePrivate(t, path)
	require.NoError(t, db.Close())
}

func TestOpen_MakesAnEarlierWorldReadableDatabasePrivate(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "api.db")
	db, err := sqlitedb.Open(ctx, path, migrations)
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, "INSERT INTO notes (body) VALUES ('kept')")
	require.NoError(t, err)
	require.NoError(t, db.Close())
	require.NoError(t, os.Chmod(path, 0o644), "as an earlier version left it")

	db, err = sqlitedb.Open(ctx, path, migrations)
	require.NoError(t, err)
	defer db.Close()
	var n int
	require.NoError(t, db.QueryRowContext(ctx, "SELECT count(*) FROM notes").Scan(&n))
	assert.Equal(t, 1, n, "the data is kept")
	requirePrivate(t, path)
}

func TestOpen_SynchronousFollowsTheOption(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []sqlitedb.Option
		want int // PRAGMA synchronous: 1 NORMAL, 2 FULL
	}{
		{"default: durable against a process crash", nil, 1},
		{"full sync: durable against power loss", []sqlitedb.Option{sqlitedb.WithFullSync(true)}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, err := sqlitedb.Open(context.Background(), filepath.Join(t.TempDir(), "t.db"), migrations, tc.opts...)
			require.NoError(t, err)
			defer db.Close()
			var mode int
			var journal string
			require.NoError(t, db.QueryRow(`PRAGMA synchronous`).Scan(&mode))
			require.NoError(t, db.QueryRow(`PRAGMA journal_mode`).Scan(&journal))
			assert.Equal(t, tc.want, mode)
			assert.Equal(t, "wal", journal)
		})
	}
}

func TestWriteProbe_FailsWhileWritesFail(t *testing.T) {
	ctx := context.Background()
	db := testkit.SQLite(t)
	require.NoError(t, sqlitedb.WriteProbe(ctx, db))
	// One connection, made read-only: every write fails, a ping answers.
	allow := testkit.RefuseWrites(t, db)
	err := sqlitedb.WriteProbe(ctx, db)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "takes no writes")
	allow()
	require.NoError(t, sqlitedb.WriteProbe(ctx, db), "ready again once writes succeed")
}

// A new database takes auto_vacuum=INCREMENTAL as it is created (no VACUUM:
// it has no table yet); one made before, with its tables and auto_vacuum
// off, is switched by a VACUUM. Either way deletes give their space back.
func TestOpen_SwitchesToIncrementalVacuumAndReclaimsSpace(t *testing.T) {
	for _, tt := range []struct {
		name  string
		older bool
	}{
		{"new database", false},
		{"older database with auto_vacuum off", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "t.db")
			if tt.older {
				old, err := sql.Open("sqlite", "file:"+path)
				require.NoError(t, err)
				_, err = old.Exec(`CREATE TABLE blobs (data BLOB NOT NULL)`)
				require.NoError(t, err)
				require.NoError(t, old.Close())
			}

			db, err := sqlitedb.Open(ctx, path, migrations)
			require.NoError(t, err)
			defer db.Close()
			var mode int
			require.NoError(t, db.QueryRow(`PRAGMA auto_vacuum`).Scan(&mode))
			assert.Equal(t, 2, mode, "INCREMENTAL")

			_, err = db.Exec(`CREATE TABLE IF NOT EXISTS blobs (data BLOB NOT NULL)`)
			require.NoError(t, err)
			for range 200 {
				_, err := db.Exec(`INSERT INTO blobs (data) VALUES (randomblob(16384))`)
				require.NoError(t, err)
			}
			require.NoError(t, sqlitedb.ReclaimSpace(ctx, db))
			full, err := os.Stat(path)
			require.NoError(t, err)
			_, err = db.Exec(`DELETE FROM blobs`)
			require.NoError(t, err)
			require.NoError(t, sqlitedb.ReclaimSpace(ctx, db))
			emptied, err := os.Stat(path)
			require.NoError(t, err)
			assert.Less(t, emptied.Size(), full.Size()/10, "%d bytes, then %d", full.Size(), emptied.Size())
		})
	}
}
