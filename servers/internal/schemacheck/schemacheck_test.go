package schemacheck_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/schemacheck"
	"github.com/apistack/apistack/servers/internal/sqlitedb"
)

func openSQLite(t *testing.T, schema string) *sql.DB {
	t.Helper()
	migrations := fstest.MapFS{"00001_init.sql": {Data: []byte("-- +goose Up\n" + schema + "\n-- +goose Down\n")}}
	db, err := sqlitedb.Open(context.Background(), filepath.Join(t.TempDir(), "t.db"), migrations)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func TestReadSQLite(t *testing.T) {
	db := openSQLite(t, `
CREATE TABLE items (
    id      TEXT PRIMARY KEY,
    owner   TEXT NOT NULL,
    name    TEXT NOT NULL,
    body    BLOB NULL,
    made_at BIGINT NOT NULL,
    gone    BOOLEAN NOT NULL DEFAULT FALSE,
    UNIQUE (owner, name)
);
CREATE UNIQUE INDEX items_live ON items (owner, made_at) WHERE gone = FALSE;
CREATE INDEX items_by_time ON items (made_at, id);`)
	s, err := schemacheck.ReadSQLite(context.Background(), db)
	require.NoError(t, err)
	require.Len(t, s, 1, "goose's own table is not described")
	assert.Equal(t, schemacheck.Table{
		Columns: map[string]schemacheck.Column{
			"id":      {Family: "text", NotNull: true},
			"owner":   {Family: "text", NotNull: true},
			"name":    {Family: "text", NotNull: true},
			"body":    {Family: "bytes"},
			"made_at": {Family: "integer", NotNull: true},
			"gone":    {Family: "bool", NotNull: true},
		},
		PrimaryKey: []string{"id"},
		Unique:     []string{"(owner, made_at) WHERE …", "(owner, name)"},
		Indexes:    map[string]schemacheck.Index{"items_by_time": {Columns: []string{"made_at", "id"}}},
	}, s["items"])
}

func TestDiff(t *testing.T) {
	base := func() schemacheck.Table {
		return schemacheck.Table{
			Columns:    map[string]schemacheck.Column{"id": {Family: "text", NotNull: true}, "at": {Family: "integer", NotNull: true}},
			PrimaryKey: []string{"id"},
			Unique:     []string{"(at)"},
			Indexes:    map[string]schemacheck.Index{"by_at": {Columns: []string{"at", "id"}}},
		}
	}
	same := schemacheck.Schema{"t": base()}
	assert.Empty(t, schemacheck.Diff("a", same, "b", schemacheck.Schema{"t": base()}))

	b := base()
	b.Columns["at"] = schemacheck.Column{Family: "timestamp", NotNull: true}
	b.Columns["extra"] = schemacheck.Column{Family: "text"}
	b.PrimaryKey = []string{"id", "at"}
	b.Unique = nil
	b.Indexes["by_at"] = schemacheck.Index{Columns: []string{"at", "id"}, Partial: true}
	b.Indexes["more"] = schemacheck.Index{Columns: []string{"extra"}}
	other := schemacheck.Schema{"t": b, "u": base()}
	assert.Equal(t, []string{
		"table t: column at is integer on a, timestamp on b",
		"table t: column extra only on b",
		"table t: index by_at is (at, id) on a, (at, id) WHERE … on b",
		"table t: index more (extra) only on b",
		"table t: primary key (id) on a, (id, at) on b",
		"table t: unique key (at) only on a",
		"table u: only on b",
	}, schemacheck.Diff("a", same, "b", other))

	c := base()
	c.Columns["at"] = schemacheck.Column{Family: "integer"}
	assert.Equal(t, []string{"table t: column at is NOT NULL on a only"}, schemacheck.Diff("a", same, "b", schemacheck.Schema{"t": c}))
}

func TestFamily(t *testing.T) {
	for declared, want := range map[string]string{
		"INTEGER": "integer", "bigint": "integer", "TEXT": "text", "character varying": "text",
		"BLOB": "bytes", "bytea": "bytes", "BOOLEAN": "bool", "TIMESTAMP": "timestamp",
		"timestamp with time zone": "timestamp", "double precision": "real", "jsonb": "jsonb",
	} {
		assert.Equal(t, want, schemacheck.Family(declared), declared)
	}
}
