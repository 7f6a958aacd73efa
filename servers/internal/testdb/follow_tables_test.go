package testdb

import (
	"context"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/cache"
	"github.com/apistack/apistack/servers/internal/pgdb"
	"github.com/apistack/apistack/servers/internal/sqldb"
)

// twoTables is a schema of two tables, one whose inserts are unannounced
// (pgdb.QuietInsertsComment).
var twoTables = fstest.MapFS{"00001_tables.sql": &fstest.MapFile{Data: []byte(`-- +goose Up
CREATE TABLE issued (id TEXT PRIMARY KEY, revoked BOOLEAN NOT NULL DEFAULT FALSE);
COMMENT ON TABLE issued IS '` + pgdb.QuietInsertsComment + `: no cache holds an absence';
CREATE TABLE listed (id TEXT PRIMARY KEY, n BIGINT NOT NULL DEFAULT 0);
`)}}

// openPair opens two replicas' pools on one fresh schema of migrations, the
// second wrapped, and returns once it listens.
func openPair(t *testing.T, migrations fstest.MapFS) (a, b *sqldb.DB) {
	t.Helper()
	rawA, rawB := OpenSchemaTwice(t, Migrations{Schema: "follow", SQLite: migrations, Postgres: migrations})
	a, b = sqldb.New(rawA, sqldb.Options{}), sqldb.New(rawB, sqldb.Options{})
	require.Eventually(t, b.Fresh, 10*time.Second, 10*time.Millisecond, "B listens")
	require.NoError(t, b.Sync(context.Background()))
	return a, b
}

// An insert into a table whose inserts are unannounced is heard by no
// replica; its updates and deletes are, as every write to another table.
func TestOpen_ATableWithUnannouncedInsertsAnnouncesItsUpdatesAndDeletes(t *testing.T) {
	a, b := openPair(t, twoTables)
	ctx := context.Background()
	for _, c := range []struct {
		stmt  string
		heard bool
	}{
		{`INSERT INTO issued (id) VALUES ('x')`, false},
		{`INSERT INTO issued (id) VALUES ('y'), ('z')`, false},
		{`UPDATE issued SET revoked = TRUE WHERE id = 'x'`, true},
		{`UPDATE issued SET revoked = TRUE WHERE id = 'nobody'`, false},
		{`DELETE FROM issued WHERE id = 'y'`, true},
		{`INSERT INTO listed (id) VALUES ('x')`, true},
		{`UPDATE listed SET n = 1`, true},
		{`DELETE FROM listed`, true},
	} {
		t.Run(c.stmt, func(t *testing.T) {
			heard := b.Heard()
			_, err := a.ExecContext(ctx, c.stmt)
			require.NoError(t, err)
			require.NoError(t, b.Sync(ctx))
			if c.heard {
				assert.Equal(t, heard+1, b.Heard())
			} else {
				assert.Equal(t, heard, b.Heard())
			}
		})
	}
}

// A table a later migration gives unannounced inserts has its trigger
// changed on the next open (and back when the comment goes).
func TestOpen_ALaterMigrationMakesATablesInsertsUnannounced(t *testing.T) {
	first := fstest.MapFS{"00001_tables.sql": &fstest.MapFile{Data: []byte(`-- +goose Up
CREATE TABLE issued (id TEXT PRIMARY KEY);
`)}}
	url, schema := OpenShared(t, Migrations{Schema: "follow", SQLite: first, Postgres: first})
	ctx := context.Background()
	events := func(migrations fstest.MapFS) string {
		raw, err := pgdb.Open(ctx, url, schema, migrations)
		require.NoError(t, err)
		defer raw.Close()
		var inserts, updates, deletes bool
		require.NoError(t, raw.QueryRowContext(ctx, `SELECT tgtype & 4 <> 0, tgtype & 16 <> 0, tgtype & 8 <> 0
			FROM pg_trigger WHERE tgname = 'apistack_notify' AND tgrelid = to_regclass($1)`, schema+".issued").Scan(&inserts, &updates, &deletes))
		return map[bool]string{true: "I", false: "-"}[inserts] + map[bool]string{true: "U", false: "-"}[updates] + map[bool]string{true: "D", false: "-"}[deletes]
	}
	assert.Equal(t, "IUD", events(first))
	second := fstest.MapFS{"00001_tables.sql": first["00001_tables.sql"], "00002_unannounced.sql": &fstest.MapFile{Data: []byte(`-- +goose Up
COMMENT ON TABLE issued IS '` + pgdb.QuietInsertsComment + `';
`)}}
	assert.Equal(t, "-UD", events(second))
	third := fstest.MapFS{"00001_tables.sql": first["00001_tables.sql"], "00002_unannounced.sql": second["00002_unannounced.sql"],
		"00003_announced.sql": &fstest.MapFile{Data: []byte(`-- +goose Up
COMMENT ON TABLE issued IS NULL;
`)}}
	assert.Equal(t, "IUD", events(third))
}

// A cache following some tables (FollowTables) is dropped by another
// replica's commit only when it changed one of them as the dependency
// says (an insert only where inserts matter), always when the replica
// listens again, and answers nothing while it is deaf.
func TestFollowTables_ACacheIsDroppedOnlyByChangesToWhatItReads(t *testing.T) {
	a, b := openPair(t, twoTables)
	ctx := context.Background()
	byKey := cache.New[string](10, time.Minute) // rows found by key: inserts do not matter
	list := cache.New[string](10, time.Minute)  // a list: inserts do
	b.FollowTables(byKey, sqldb.Dependency{Table: "listed"}, sqldb.Dependency{Table: "issued"})
	b.FollowTables(list, sqldb.Dependency{Table: "listed", Inserts: true})
	_, err := a.ExecContext(ctx, `INSERT INTO issued (id) VALUES ('k')`)
	require.NoError(t, err)
	for _, c := range []struct {
		stmt          string
		byKey, listed bool // dropped
	}{
		{`INSERT INTO listed (id) VALUES ('a')`, false, true},
		{`UPDATE listed SET n = n + 1 WHERE id = 'a'`, true, true},
		{`UPDATE issued SET revoked = TRUE WHERE id = 'k'`, true, false},
		{`DELETE FROM issued WHERE id = 'k'`, true, false},
		{`DELETE FROM listed WHERE id = 'a'`, true, true},
	} {
		t.Run(c.stmt, func(t *testing.T) {
			byKey.Put(byKey.Generation(), "k", "v")
			list.Put(list.Generation(), "k", "v")
			_, err := a.ExecContext(ctx, c.stmt)
			require.NoError(t, err)
			require.NoError(t, b.Sync(ctx))
			_, kept := byKey.Get("k")
			assert.Equal(t, !c.byKey, kept, "the cache of rows by key")
			_, kept = list.Get("k")
			assert.Equal(t, !c.listed, kept, "the list")
		})
	}

	// B's listening session ends: every cache is dropped once B listens
	// again, whatever it follows.
	byKey.Put(byKey.Generation(), "k", "v")
	list.Put(list.Generation(), "k", "v")
	heard := b.Heard()
	var n int
	require.NoError(t, a.QueryRowContext(ctx,
		`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = ?`, pgdb.WatcherName(b.SQL())).Scan(&n))
	require.Equal(t, 1, n)
	require.Eventually(t, func() bool { return b.Heard() > heard }, 10*time.Second, 5*time.Millisecond, "B listens again")
	_, ok := byKey.Get("k")
	assert.False(t, ok)
	_, ok = list.Get("k")
	assert.False(t, ok)
}
