package masterkey_test

import (
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/masterkey"
)

func TestParse(t *testing.T) {
	raw := make([]byte, masterkey.Size)
	for i := range raw {
		raw[i] = byte(i * 7)
	}
	for _, tc := range []struct {
		name, text, err string
	}{
		{"standard", base64.StdEncoding.EncodeToString(raw) + "\n", ""},
		{"raw url", base64.RawURLEncoding.EncodeToString(raw), ""},
		{"empty", "  \n", "empty"},
		{"not base64", "!!!", "not base64"},
		{"short", base64.StdEncoding.EncodeToString(raw[:16]), "16 bytes, want 32"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, err := masterkey.Parse(tc.text)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				assert.Contains(t, err.Error(), "head -c32 /dev/urandom | base64", "the error says how to make a key")
				return
			}
			require.NoError(t, err)
			got, err := k.Derive("fax")
			require.NoError(t, err)
			want, err := hkdf.Key(sha256.New, raw, nil, "fax", 32)
			require.NoError(t, err)
			assert.Equal(t, want, got, "HKDF-SHA256 of the master key, info = the API's name")
		})
	}
}

func TestDerive_EachAPIItsOwnKeySameOnEveryReplica(t *testing.T) {
	path := filepath.Join(t.TempDir(), "master.key")
	require.NoError(t, os.WriteFile(path, []byte("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n"), 0o600))
	a, err := masterkey.ReadFile(path)
	require.NoError(t, err)
	b, err := masterkey.Parse("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=")
	require.NoError(t, err)
	faxA, err := a.Derive("fax")
	require.NoError(t, err)
	faxB, err := b.Derive("fax")
	require.NoError(t, err)
	storageA, err := a.Derive("storage")
	require.NoError(t, err)
	assert.Equal(t, faxA, faxB)
	assert.NotEqual(t, faxA, storageA)
	assert.Len(t, storageA, masterkey.Size)

	_, err = masterkey.Key{}.Derive("fax")
	require.Error(t, err)
	_, err = masterkey.ReadFile(filepath.Join(t.TempDir(), "missing"))
	require.Error(t, err)
}
