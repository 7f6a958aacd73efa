package schemacheck_test

import (
	"context"
	"database/sql"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/fax"
	"github.com/apistack/apistack/servers/internal/sqlitedb"
	"github.com/apistack/apistack/servers/internal/testdb"
	"github.com/apistack/apistack/servers/pam"
	"github.com/apistack/apistack/servers/restaurant"
	"github.com/apistack/apistack/servers/storage"
)

// releaseDir is a data directory written by an earlier release (its README
// says how it was made).
var releaseDir = filepath.Join("..", "..", "..", "testdata", "datadir-fe4e5b5")

// lastTwoSetsDir is a data directory written by the last release whose
// migrations were two hand-kept sets per API (its README says how it was
// made).
var lastTwoSetsDir = filepath.Join("..", "..", "..", "testdata", "datadir-0401f8e")

// copyDB copies one database of the release's data directory into a fresh
// directory and returns its path.
func copyDB(t *testing.T, name string) string {
	t.Helper()
	return copyDBFrom(t, releaseDir, name)
}

// copyDBFrom copies one database of the data directory dir into a fresh
// directory and returns its path.
func copyDBFrom(t *testing.T, dir, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name+".db"))
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), name+".db")
	require.NoError(t, os.WriteFile(path, data, 0o600))
	return path
}

// readRaw runs query on the file as the release left it (no migration).
func readRaw(t *testing.T, path, query string) [][]any {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	require.NoError(t, err)
	defer db.Close()
	rows, err := db.Query(query)
	require.NoError(t, err)
	defer rows.Close()
	cols, err := rows.Columns()
	require.NoError(t, err)
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		require.NoError(t, rows.Scan(ptrs...))
		out = append(out, vals)
	}
	require.NoError(t, rows.Err())
	return out
}

// rowCounts counts the rows of every table of db but goose's.
func rowCounts(t *testing.T, db *sql.DB) map[string]int64 {
	t.Helper()
	tables, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'goose_db_version'`)
	require.NoError(t, err)
	out := map[string]int64{}
	for _, n := range testdb.Strings(t, tables) {
		var c int64
		require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM "`+n+`"`).Scan(&c))
		out[n] = c
	}
	return out
}

// TestReleaseDataDirectory_OpensAndKeepsItsData opens each SQLite file of
// the earlier release with today's migrations: every row is still there
// (the tables made since start empty), and the instants stored the old
// ways read back as the same instants.
func TestReleaseDataDirectory_OpensAndKeepsItsData(t *testing.T) {
	ctx := context.Background()
	apis := map[string]fs.FS{
		"pam": pam.API.Migrations().SQLite, "fax": fax.API.Migrations().SQLite, "storage": storage.API.Migrations().SQLite, "restaurant": restaurant.API.Migrations().SQLite,
	}
	for name, migrations := range apis {
		t.Run(name, func(t *testing.T) {
			path := copyDB(t, name)
			raw, err := sql.Open("sqlite", "file:"+path)
			require.NoError(t, err)
			before := rowCounts(t, raw)
			require.NoError(t, raw.Close())
			require.NotZero(t, before[map[string]string{"pam": "teams", "fax": "faxes", "storage": "buckets", "restaurant": "entities"}[name]],
				"the fixture holds data")

			db, err := sqlitedb.Open(ctx, path, migrations)
			require.NoError(t, err)
			defer db.Close()
			after := rowCounts(t, db)
			for table, n := range after {
				if _, ok := before[table]; !ok {
					assert.Zero(t, n, "table %s, which a later migration made, starts empty", table)
					delete(after, table)
				}
			}
			assert.Equal(t, before, after, "every row is kept")
		})
	}
}

// sqliteSchema is every statement of db's schema (sqlite_master), by kind
// and name, as SQLite keeps its text.
func sqliteSchema(t *testing.T, db *sql.DB) map[string]string {
	t.Helper()
	rows, err := db.Query(`SELECT type || ' ' || name, COALESCE(sql, '') FROM sqlite_master`)
	require.NoError(t, err)
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var name, text string
		require.NoError(t, rows.Scan(&name, &text))
		out[name] = text
	}
	require.NoError(t, rows.Err())
	return out
}

// TestLastTwoSetsDataDirectory_OpensAsItIs opens each SQLite file of the
// last release that kept two migration sets per API with today's, written
// once where the engines share them: goose finds every version it applied
// (so it applies none of them again), every row is kept (a table added since
// is there, empty), and the file's
// schema is, to the text of each statement, the one a new file gets.
func TestLastTwoSetsDataDirectory_OpensAsItIs(t *testing.T) {
	ctx := context.Background()
	for _, m := range apis() {
		t.Run(m.Schema, func(t *testing.T) {
			path := copyDBFrom(t, lastTwoSetsDir, m.Schema)
			raw, err := sql.Open("sqlite", "file:"+path)
			require.NoError(t, err)
			before := rowCounts(t, raw)
			applied := readRawDB1(t, raw, `SELECT COUNT(*) FROM goose_db_version WHERE version_id > 0`)
			require.NoError(t, raw.Close())
			require.NotZero(t, applied)

			db, err := sqlitedb.Open(ctx, path, m.SQLite)
			require.NoError(t, err)
			defer db.Close()
			fresh, err := sqlitedb.Open(ctx, filepath.Join(t.TempDir(), "new.db"), m.SQLite)
			require.NoError(t, err)
			defer fresh.Close()

			// The tables the migrations since the release added hold nothing
			// yet; every other table keeps every row.
			after := rowCounts(t, db)
			for name, n := range after {
				if _, ok := before[name]; !ok {
					assert.Zero(t, n, "table %s is new since the release", name)
					before[name] = 0
				}
			}
			assert.Equal(t, before, after, "every row is kept")
			assert.Equal(t, sqliteSchema(t, fresh), sqliteSchema(t, db), "the same schema as a new file's")
			assert.Equal(t, readRawDB1(t, fresh, `SELECT COUNT(*) FROM goose_db_version WHERE version_id > 0`),
				readRawDB1(t, db, `SELECT COUNT(*) FROM goose_db_version WHERE version_id > 0`), "every version applied once")
		})
	}
}

func readRawDB1(t *testing.T, db *sql.DB, query string) int64 {
	t.Helper()
	var n int64
	require.NoError(t, db.QueryRow(query).Scan(&n))
	return n
}

func TestReleaseDataDirectory_StorageInstants(t *testing.T) {
	ctx := context.Background()
	path := copyDB(t, "storage")
	old := readRaw(t, path, `SELECT name, CAST(created_at AS TEXT) FROM buckets ORDER BY name`)
	require.NotEmpty(t, old)

	db, err := sqlitedb.Open(ctx, path, storage.API.Migrations().SQLite)
	require.NoError(t, err)
	defer db.Close()
	key, err := os.ReadFile(filepath.Join(releaseDir, "storage-master.key"))
	require.NoError(t, err)
	srv, err := storage.New(storage.Config{Deps: storage.Deps{DB: db}, MasterKey: key})
	require.NoError(t, err)
	for _, row := range old {
		want, err := time.Parse("2006-01-02 15:04:05.999999999 -0700 MST", row[1].(string))
		require.NoError(t, err, "the release stored time.Time's text")
		b, err := srv.Operator().Bucket(ctx, row[0].(string))
		require.NoError(t, err)
		assert.Equal(t, want.UTC(), b.CreatedAt, "bucket %s", row[0])
	}
	n, err := srv.Operator().LifecycleCount(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, n, "the stored lifecycle configuration is kept")
	keys, err := srv.Operator().Keys(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, keys)
	for _, k := range keys {
		assert.False(t, k.CreatedAt.IsZero(), "key %s", k.KeyID)
	}
}

func TestReleaseDataDirectory_RestaurantInstants(t *testing.T) {
	ctx := context.Background()
	path := copyDB(t, "restaurant")
	old := readRaw(t, path, `SELECT guid, created_at_ms, (SELECT COUNT(*) FROM entities e WHERE e.restaurant_guid = r.guid) FROM restaurants r`)
	require.Len(t, old, 1)
	oldEntities := readRaw(t, path, `SELECT SUM(created_ms), SUM(modified_ms) FROM entities`)

	db, err := sqlitedb.Open(ctx, path, restaurant.API.Migrations().SQLite)
	require.NoError(t, err)
	defer db.Close()
	newEntities := readRawDB(t, db, `SELECT SUM(created_at), SUM(modified_at) FROM entities`)
	assert.Equal(t, oldEntities[0][0].(int64)*1000, newEntities[0][0].(int64), "milliseconds became microseconds")
	assert.Equal(t, oldEntities[0][1].(int64)*1000, newEntities[0][1].(int64))

	srv, err := restaurant.New(ctx, restaurant.Config{Deps: restaurant.Deps{DB: db}})
	require.NoError(t, err)
	guid := old[0][0].(string)
	r, err := srv.Operator().Restaurant(ctx, guid)
	require.NoError(t, err)
	assert.Equal(t, time.UnixMilli(old[0][1].(int64)).UTC(), r.CreatedAt)
	counts, err := srv.Operator().Counts(ctx, guid)
	require.NoError(t, err)
	total := 0
	for _, c := range counts {
		total += c
	}
	assert.EqualValues(t, old[0][2], total, "every entity is still served")
}

func readRawDB(t *testing.T, db *sql.DB, query string) [][]any {
	t.Helper()
	var a, b int64
	require.NoError(t, db.QueryRow(query).Scan(&a, &b))
	return [][]any{{a, b}}
}

func TestReleaseDataDirectory_PAMInstants(t *testing.T) {
	ctx := context.Background()
	path := copyDB(t, "pam")
	layout := "2006-01-02 15:04:05.999999999 -0700 MST"
	oldTeam := readRaw(t, path, `SELECT name, CAST(created_at AS TEXT) FROM teams`)
	require.Len(t, oldTeam, 1)
	oldToken := readRaw(t, path, `SELECT CAST(created_at AS TEXT), CAST(expires_at AS TEXT), revoked_at FROM tokens`)
	require.Len(t, oldToken, 1)

	db, err := sqlitedb.Open(ctx, path, pam.API.Migrations().SQLite)
	require.NoError(t, err)
	defer db.Close()
	srv, err := pam.New(ctx, pam.Config{Deps: pam.Deps{DB: db}})
	require.NoError(t, err)
	team, err := srv.Operator().Team(ctx, oldTeam[0][0].(string))
	require.NoError(t, err)
	want, err := time.Parse(layout, oldTeam[0][1].(string))
	require.NoError(t, err)
	assert.Equal(t, want.UTC(), team.CreatedAt)

	var created, expires int64
	var revoked sql.NullInt64
	require.NoError(t, db.QueryRow(`SELECT created_at, expires_at, revoked_at FROM tokens`).Scan(&created, &expires, &revoked))
	for i, us := range []int64{created, expires} {
		want, err := time.Parse(layout, oldToken[0][i].(string))
		require.NoError(t, err)
		assert.Equal(t, want.UnixMicro(), us)
	}
	assert.Nil(t, oldToken[0][2])
	assert.False(t, revoked.Valid, "NULL stays NULL")
}
