package testdb

import (
	"context"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/pgdb"
	"github.com/apistack/apistack/servers/internal/sqldb"
)

// A table whose comment starts with pgdb.QuietComment notifies no replica:
// it gets no trigger, and a table a later migration makes quiet loses the
// one it had when a replica next opens the schema.
func TestOpen_AQuietTableNotifiesNoReplica(t *testing.T) {
	first := fstest.MapFS{"00001_tables.sql": &fstest.MapFile{Data: []byte(`-- +goose Up
CREATE TABLE loud (id TEXT PRIMARY KEY);
CREATE TABLE hushed (id TEXT PRIMARY KEY);
COMMENT ON TABLE hushed IS '` + pgdb.QuietComment + `: no cache reads it';
`)}}
	m := Migrations{Schema: "quiet", SQLite: first, Postgres: first}
	url, schema := OpenShared(t, m)
	ctx := context.Background()
	open := func(migrations fstest.MapFS) *sqldb.DB {
		raw, err := pgdb.Open(ctx, url, schema, migrations)
		require.NoError(t, err)
		db := sqldb.New(raw, sqldb.Options{})
		t.Cleanup(func() { _ = db.Close() })
		return db
	}
	a, b := open(first), open(first)
	require.Eventually(t, b.Fresh, 10*time.Second, 10*time.Millisecond, "B listens")
	require.NoError(t, b.Sync(ctx))
	notifying := func() []string {
		rows, err := a.QueryContext(ctx, `SELECT c.relname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
			WHERE t.tgname = 'apistack_notify' AND c.relnamespace = to_regnamespace(?) ORDER BY c.relname`, schema)
		require.NoError(t, err)
		return Strings(t, rows)
	}
	assert.Equal(t, []string{"loud"}, notifying())

	heard := b.Heard()
	_, err := a.ExecContext(ctx, `INSERT INTO hushed (id) VALUES ('x')`)
	require.NoError(t, err)
	require.NoError(t, b.Sync(ctx))
	assert.Equal(t, heard, b.Heard(), "a write to a quiet table is not heard")
	_, err = a.ExecContext(ctx, `INSERT INTO loud (id) VALUES ('x')`)
	require.NoError(t, err)
	require.NoError(t, b.Sync(ctx))
	assert.Equal(t, heard+1, b.Heard(), "a write to another table is")

	// A later migration makes loud quiet too: the next open takes its
	// trigger off.
	second := fstest.MapFS{"00001_tables.sql": first["00001_tables.sql"], "00002_quiet.sql": &fstest.MapFile{Data: []byte(`-- +goose Up
COMMENT ON TABLE loud IS '` + pgdb.QuietComment + `';
`)}}
	open(second)
	assert.Empty(t, notifying())
}
