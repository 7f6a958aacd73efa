package secretbox

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBox_SealsBoundToTheLabel(t *testing.T) {
	key, err := LoadOrCreateKey(filepath.Join(t.TempDir(), "master.key"))
	require.NoError(t, err)
	box, err := New(key)
	require.NoError(t, err)

	sealed := box.Seal("CKAAAA", []byte("s3cr3t"))
	assert.True(t, IsSealed(sealed))
	assert.NotContains(t, sealed, "s3cr3t")
	got, err := box.Open("CKAAAA", sealed)
	require.NoError(t, err)
	assert.Equal(t, "s3cr3t", string(got))
	assert.NotEqual(t, sealed, box.Seal("CKAAAA", []byte("s3cr3t")), "every seal has its own nonce")

	_, err = box.Open("CKBBBB", sealed)
	assert.Error(t, err, "a sealed secret moved to another row does not open")
	_, err = box.Open("CKAAAA", "s3cr3t")
	assert.Error(t, err, "a plain-text secret is refused")
	assert.False(t, IsSealed("s3cr3t"))
	_, err = box.Open("CKAAAA", sealed[:len(sealed)-2]+"AA")
	assert.Error(t, err, "a tampered secret is refused")

	other, err := New(make([]byte, KeySize))
	require.NoError(t, err)
	_, err = other.Open("CKAAAA", sealed)
	assert.Error(t, err, "another key does not open it")

	_, err = New([]byte("short"))
	assert.Error(t, err)
}

func TestLoadOrCreateKey_CreatesOnceWithOwnerOnlyMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "master.key")
	first, err := LoadOrCreateKey(path)
	require.NoError(t, err)
	again, err := LoadOrCreateKey(path)
	require.NoError(t, err)
	assert.Equal(t, first, again, "the key survives restarts")
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())

	require.NoError(t, os.WriteFile(path, []byte("too short"), 0o600))
	_, err = LoadOrCreateKey(path)
	assert.ErrorContains(t, err, "want 32")
}
