package testdb

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/pgdb"
)

// Two opens of a shared schema see each other's writes: they are one
// database, as replicas see it.
func TestOpenShared_OpensAreOneDatabase(t *testing.T) {
	ctx := context.Background()
	m := Migrations{Schema: "notes", SQLite: notes, Postgres: notes}
	url, schema := OpenShared(t, m)
	one, err := pgdb.Open(ctx, url, schema, m.Postgres)
	require.NoError(t, err)
	t.Cleanup(func() { _ = one.Close() })
	two, err := pgdb.Open(ctx, url, schema, m.Postgres)
	require.NoError(t, err)
	t.Cleanup(func() { _ = two.Close() })

	_, err = one.ExecContext(ctx, `INSERT INTO notes (id, body, n) VALUES ('a', 'from one', 1)`)
	require.NoError(t, err)
	var body string
	require.NoError(t, two.QueryRowContext(ctx, `SELECT body FROM notes WHERE id = 'a'`).Scan(&body))
	assert.Equal(t, "from one", body)
}
