package storage

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/testdb"
)

func TestCreateKey_StoresNoPlainSecret(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := testdb.Open(t, testdb.Migrations{Schema: "storage", SQLite: Migrations(), Postgres: PostgresMigrations()})
	key, err := LoadOrCreateMasterKey(filepath.Join(dir, "master.key"))
	require.NoError(t, err)
	srv, err := New(Config{Deps: Deps{DB: db}, MasterKey: key})
	require.NoError(t, err)

	k, err := srv.CreateKey(ctx, "", "ci")
	require.NoError(t, err)
	var stored string
	require.NoError(t, srv.store.db.QueryRowContext(ctx, `SELECT secret FROM access_keys WHERE key_id = ?`, k.KeyID).Scan(&stored))
	assert.False(t, strings.Contains(stored, k.Secret), "the database holds no plain secret")
	assert.True(t, srv.KeyWorks(ctx, DefaultAccount, k.KeyID, k.Secret))

	// The same database under another master key cannot verify the key.
	srv2, err := New(Config{Deps: Deps{DB: db}, MasterKey: make([]byte, MasterKeySize)})
	require.NoError(t, err)
	assert.False(t, srv2.KeyWorks(ctx, DefaultAccount, k.KeyID, k.Secret))
}
