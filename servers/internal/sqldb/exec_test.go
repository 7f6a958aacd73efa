package sqldb_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/sqldb"
	"github.com/apistack/apistack/servers/internal/storeerr"
)

func TestExecOne(t *testing.T) {
	db := open(t)
	ctx := context.Background()
	insert := `INSERT INTO kv (k, v) VALUES (?, ?) ON CONFLICT (k) DO NOTHING`
	require.NoError(t, sqldb.ExecOne(ctx, db, storeerr.ErrAlreadyExists, insert, "a", 1))
	assert.ErrorIs(t, sqldb.ExecOne(ctx, db, storeerr.ErrAlreadyExists, insert, "a", 2), storeerr.ErrAlreadyExists, "the key is taken")

	tx, err := db.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	require.NoError(t, sqldb.ExecOne(ctx, tx, storeerr.ErrNotFound, `UPDATE kv SET v = 3 WHERE k = ?`, "a"))
	assert.ErrorIs(t, sqldb.ExecOne(ctx, tx, storeerr.ErrNotFound, `UPDATE kv SET v = 3 WHERE k = ?`, "b"), storeerr.ErrNotFound)
	require.NoError(t, tx.Commit())

	err = sqldb.ExecOne(ctx, db, storeerr.ErrNotFound, `UPDATE nothing SET v = 1`)
	require.Error(t, err)
	assert.NotErrorIs(t, err, storeerr.ErrNotFound, "a failed statement is its own error")
}
