package apistore_test

import (
	"context"
	"database/sql"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/apistore"
	"github.com/apistack/apistack/servers/internal/sqldb"
	"github.com/apistack/apistack/servers/internal/testdb"
)

// schema is a settings table as every API has, and a table of names.
var schema = fstest.MapFS{"00001_init.sql": {Data: []byte(`-- +goose Up
CREATE TABLE settings (name TEXT PRIMARY KEY, value BYTEA NOT NULL);
CREATE TABLE names (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
`)}}

func open(t *testing.T) *sqldb.DB {
	t.Helper()
	return sqldb.New(testdb.Open(t, testdb.Migrations{Schema: "apistore", SQLite: schema, Postgres: schema}), sqldb.Options{})
}

func TestSecret_IsMadeOnceAndKept(t *testing.T) {
	ctx := context.Background()
	db := open(t)
	first, err := apistore.Secret(ctx, db, "cursor_key")
	require.NoError(t, err)
	assert.Len(t, first, apistore.SecretSize)
	again, err := apistore.Secret(ctx, db, "cursor_key")
	require.NoError(t, err)
	assert.Equal(t, first, again, "the stored secret is read back")
	other, err := apistore.Secret(ctx, db, "other_key")
	require.NoError(t, err)
	assert.NotEqual(t, first, other, "each name has its own secret")

	// The codec of another server on the same database reads the tokens of
	// this one's.
	a, err := apistore.Cursors(ctx, db)
	require.NoError(t, err)
	b, err := apistore.Cursors(ctx, db)
	require.NoError(t, err)
	token, err := a.Encode("list", 42)
	require.NoError(t, err)
	var pos int
	require.NoError(t, b.Decode("list", token, &pos))
	assert.Equal(t, 42, pos)
}

func TestRunAndCollect(t *testing.T) {
	ctx := context.Background()
	db := open(t)
	scan := func(rows *sql.Rows, name *string) error { return rows.Scan(name) }
	none, err := apistore.Collect(ctx, db, scan, `SELECT name FROM names ORDER BY id`)
	require.NoError(t, err)
	assert.Empty(t, none)

	require.NoError(t, db.InTx(ctx, func(tx *sqldb.Tx) error {
		return apistore.Run(ctx, tx,
			apistore.Step{Query: `INSERT INTO names (id, name) VALUES (?, ?)`, Args: []any{1, "a"}},
			apistore.Step{Query: `INSERT INTO names (id, name) VALUES (?, ?)`, Args: []any{2, "b"}},
			apistore.Step{Query: `DELETE FROM names WHERE name = ?`, Args: []any{"a"}},
			apistore.Step{Query: `INSERT INTO names (id, name) VALUES (?, ?)`, Args: []any{3, "c"}})
	}))
	names, err := apistore.Collect(ctx, db, scan, `SELECT name FROM names WHERE id > ? ORDER BY id`, 0)
	require.NoError(t, err)
	assert.Equal(t, []string{"b", "c"}, names, "the steps ran in order")

	err = db.InTx(ctx, func(tx *sqldb.Tx) error {
		return apistore.Run(ctx, tx,
			apistore.Step{Query: `INSERT INTO names (id, name) VALUES (?, ?)`, Args: []any{4, "d"}},
			apistore.Step{Query: `INSERT INTO names (id, name) VALUES (?, ?)`, Args: []any{2, "twice"}},
			apistore.Step{Query: `INSERT INTO names (id, name) VALUES (?, ?)`, Args: []any{5, "e"}})
	})
	require.Error(t, err, "the second step breaks the key")
	names, err = apistore.Collect(ctx, db, scan, `SELECT name FROM names ORDER BY id`)
	require.NoError(t, err)
	assert.Equal(t, []string{"b", "c"}, names, "a failed step ends the script and its transaction")

	_, err = apistore.Collect(ctx, db, scan, `SELECT nothing FROM names`)
	assert.Error(t, err, "a query's error is returned")

	ids, err := apistore.Collect(ctx, db, apistore.Scan[int64], `SELECT id FROM names ORDER BY id`)
	require.NoError(t, err)
	assert.Equal(t, []int64{2, 3}, ids)
}

func TestCounts(t *testing.T) {
	ctx := context.Background()
	db := open(t)
	counts, err := apistore.Counts(ctx, db, `SELECT name, COUNT(*) FROM names GROUP BY name`)
	require.NoError(t, err)
	assert.Empty(t, counts)
	assert.NotNil(t, counts, "no rows is an empty map")
	for i, name := range []string{"a", "b", "a", "c", "a"} {
		_, err := db.ExecContext(ctx, `INSERT INTO names (id, name) VALUES (?, ?)`, i, name)
		require.NoError(t, err)
	}
	counts, err = apistore.Counts(ctx, db, `SELECT name, COUNT(*) FROM names WHERE name <> ? GROUP BY name`, "c")
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"a": 3, "b": 1}, counts)
}
