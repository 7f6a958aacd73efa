package secretbox

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
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
	raw, err := base64.RawStdEncoding.DecodeString(strings.TrimPrefix(sealed, sealedPrefix))
	require.NoError(t, err)
	for i := range raw {
		tampered := bytes.Clone(raw)
		tampered[i] ^= 0x01
		_, err = box.Open("CKAAAA", sealedPrefix+base64.RawStdEncoding.EncodeToString(tampered))
		assert.Error(t, err, "a secret with byte %d changed is refused", i)
	}
	// The last character of the encoding carries bits that lenient base64
	// ignores; a changed one is refused all the same.
	last := sealed[len(sealed)-1]
	for _, c := range []byte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/") {
		if c == last {
			continue
		}
		_, err = box.Open("CKAAAA", sealed[:len(sealed)-1]+string(c))
		assert.Error(t, err, "a secret whose last character is %q is refused", c)
	}

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
