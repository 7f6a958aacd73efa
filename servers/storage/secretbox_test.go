package storage

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/sqlitedb"
)

func TestSecretBox_SealsBoundToTheKeyID(t *testing.T) {
	key, err := LoadOrCreateMasterKey(filepath.Join(t.TempDir(), "master.key"))
	require.NoError(t, err)
	box, err := newSecretBox(key)
	require.NoError(t, err)

	sealed := box.seal("CKAAAA", "s3cr3t")
	assert.NotContains(t, sealed, "s3cr3t")
	got, err := box.open("CKAAAA", sealed)
	require.NoError(t, err)
	assert.Equal(t, "s3cr3t", got)

	_, err = box.open("CKBBBB", sealed)
	assert.Error(t, err, "a sealed secret moved to another key's row does not open")
	_, err = box.open("CKAAAA", "s3cr3t")
	assert.Error(t, err, "a plain-text secret is refused")
	_, err = box.open("CKAAAA", sealed[:len(sealed)-2]+"AA")
	assert.Error(t, err, "a tampered secret is refused")

	other, err := newSecretBox(make([]byte, MasterKeySize))
	require.NoError(t, err)
	_, err = other.open("CKAAAA", sealed)
	assert.Error(t, err, "another master key does not open it")

	_, err = newSecretBox([]byte("short"))
	assert.Error(t, err)
}

func TestLoadOrCreateMasterKey_CreatesOnceWithOwnerOnlyMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "master.key")
	first, err := LoadOrCreateMasterKey(path)
	require.NoError(t, err)
	again, err := LoadOrCreateMasterKey(path)
	require.NoError(t, err)
	assert.Equal(t, first, again, "the key survives restarts")
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())

	require.NoError(t, os.WriteFile(path, []byte("too short"), 0o600))
	_, err = LoadOrCreateMasterKey(path)
	assert.ErrorContains(t, err, "want 32")
}

func TestCreateKey_StoresNoPlainSecret(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := sqlitedb.Open(ctx, filepath.Join(dir, "storage.db"), Migrations())
	require.NoError(t, err)
	defer db.Close()
	key, err := LoadOrCreateMasterKey(filepath.Join(dir, "master.key"))
	require.NoError(t, err)
	srv, err := New(Config{DB: db, MasterKey: key})
	require.NoError(t, err)

	k, err := srv.CreateKey(ctx, "ci")
	require.NoError(t, err)
	var stored string
	require.NoError(t, db.QueryRowContext(ctx, `SELECT secret FROM access_keys WHERE key_id = ?`, k.KeyID).Scan(&stored))
	assert.False(t, strings.Contains(stored, k.Secret), "the database holds no plain secret")
	assert.True(t, srv.KeyWorks(ctx, k.KeyID, k.Secret))

	// The same database under another master key cannot verify the key.
	srv2, err := New(Config{DB: db, MasterKey: make([]byte, MasterKeySize)})
	require.NoError(t, err)
	assert.False(t, srv2.KeyWorks(ctx, k.KeyID, k.Secret))
}
