package main

import (
	"encoding/base64"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseServeFlags_DatabaseNeedsASharedMasterKeyAndAdminToken(t *testing.T) {
	dir := t.TempDir()
	keyText := base64.StdEncoding.EncodeToString(make([]byte, 32))
	keyFile := filepath.Join(dir, "master.key")
	require.NoError(t, os.WriteFile(keyFile, []byte(keyText+"\n"), 0o600))
	tokenFile := filepath.Join(dir, "admin.token")
	require.NoError(t, os.WriteFile(tokenFile, []byte("adm_shared\n"), 0o600))
	const url = "postgres://apistack@127.0.0.1:5432/apistack"

	for _, tc := range []struct {
		name string
		args []string
		env  string // APISTACK_MASTER_KEY, when set
		err  string
	}{
		{name: "sqlite needs nothing", args: nil},
		{name: "no master key", args: []string{"--database", url, "--admin-token-file", tokenFile}, err: "head -c32 /dev/urandom | base64"},
		{name: "no admin token", args: []string{"--database", url, "--master-key-file", keyFile}, err: "admin token every replica shares"},
		{name: "key file", args: []string{"--database", url, "--master-key-file", keyFile, "--admin-token-file", tokenFile}},
		{name: "key in the environment", args: []string{"--database", url, "--admin-token-file", tokenFile}, env: keyText},
		{name: "key twice", args: []string{"--master-key-file", keyFile}, env: keyText, err: "not both"},
		{name: "bad key", args: nil, env: "c2hvcnQ=", err: "5 bytes, want 32"},
		{name: "missing key file", args: []string{"--master-key-file", filepath.Join(dir, "missing")}, err: "--master-key-file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv(masterKeyVariable, tc.env)
			}
			c, err := parseServeFlags(tc.args, io.Discard)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			if c.Database == "" && tc.env == "" {
				assert.True(t, c.MasterKey.IsZero())
				return
			}
			assert.Equal(t, "adm_shared", c.AdminToken)
			keys := c.apiKeys()
			require.NotNil(t, keys, "keys derived from the master key, no key files")
			fax, err := keys("fax")
			require.NoError(t, err)
			storage, err := keys("storage")
			require.NoError(t, err)
			assert.Len(t, fax, 32)
			assert.NotEqual(t, fax, storage, "each API derives its own key")
		})
	}
}

func TestParseServeFlags_DatabaseFromTheEnvironment(t *testing.T) {
	t.Setenv("APISTACK_DATABASE", "postgres://x@127.0.0.1/y")
	t.Setenv(masterKeyVariable, base64.StdEncoding.EncodeToString(make([]byte, 32)))
	t.Setenv("APISTACK_ADMIN_TOKEN", "adm_env")
	c, err := parseServeFlags(nil, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, "postgres://x@127.0.0.1/y", c.Database)
	assert.False(t, c.MasterKey.IsZero())
}

func TestParseServeFlags_DatabaseMaxConns(t *testing.T) {
	c, err := parseServeFlags([]string{"--database-max-conns", "12"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, 12, c.DatabaseMaxConns)
	c, err = parseServeFlags(nil, io.Discard)
	require.NoError(t, err)
	assert.Zero(t, c.DatabaseMaxConns, "0: the default pool size")
	_, err = parseServeFlags([]string{"--database-max-conns", "-1"}, io.Discard)
	assert.ErrorContains(t, err, "--database-max-conns -1")
}
