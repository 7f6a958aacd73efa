package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/safebuf"
)

// fileSecrets are the secrets of the credentials file in dataDir.
func fileSecrets(t *testing.T, dataDir string) []demoSecret {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dataDir, "demo-credentials.json"))
	require.NoError(t, err)
	var c demoCredentials
	require.NoError(t, json.Unmarshal(data, &c))
	secrets := secretsOf(c)
	require.Len(t, secrets, 5, "pam, fax, storage, restaurant and admin each have a secret")
	return secrets
}

func TestServeDemo_PrintsSecretsOnlyWhenCreated(t *testing.T) {
	dataDir := t.TempDir()
	_, first, stop := startServe(t, dataDir)
	require.NoError(t, stop())
	secrets := fileSecrets(t, dataDir)
	for _, s := range secrets {
		assert.Contains(t, first.String(), s.value, "the first start shows %s, just created", s.path)
	}

	_, second, stop := startServe(t, dataDir)
	require.NoError(t, stop())
	assert.Equal(t, secrets, fileSecrets(t, dataDir), "the second start reuses every secret")
	out := second.String()
	for _, s := range secrets {
		assert.NotContains(t, out, s.value, "the second start hides %s", s.path)
		assert.Contains(t, out, "<"+s.path+">")
	}
	assert.Contains(t, out, filepath.Join(dataDir, "demo-credentials.json"))
	assert.Contains(t, out, "curl -s", "the curl lines are still printed")

	// Every file of the data directory is its owner's alone.
	files, err := filepath.Glob(filepath.Join(dataDir, "*"))
	require.NoError(t, err)
	var dbs int
	for _, f := range files {
		info, err := os.Stat(f)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), filepath.Base(f))
		if filepath.Ext(f) == ".db" {
			dbs++
		}
	}
	assert.Equal(t, 5, dbs, "pam, fax, storage, restaurant and sandbox databases")
}

func TestServeFlags_AdminTokenFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "admin-token")
	require.NoError(t, os.WriteFile(path, []byte("adm_from_file\n"), 0o600))
	c, err := parseServeFlags([]string{"--admin-token-file", path}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, "adm_from_file", c.AdminToken)

	_, err = parseServeFlags([]string{"--admin-token-file", path, "--admin-token", "x"}, io.Discard)
	assert.ErrorContains(t, err, "not both")
	_, err = parseServeFlags([]string{"--admin-token-file", filepath.Join(dir, "missing")}, io.Discard)
	assert.Error(t, err)
	empty := filepath.Join(dir, "empty")
	require.NoError(t, os.WriteFile(empty, []byte(" \n"), 0o600))
	_, err = parseServeFlags([]string{"--admin-token-file", empty}, io.Discard)
	assert.ErrorContains(t, err, "empty")

	var help strings.Builder
	_, _ = parseServeFlags([]string{"-h"}, &help)
	assert.Contains(t, help.String(), "prefer APISTACK_ADMIN_TOKEN or --admin-token-file", "--admin-token warns of ps")
}

// Without --demo, serve prints the admin token only when it made it up.
func TestServe_PrintsTheAdminTokenOnlyWhenGenerated(t *testing.T) {
	for _, tc := range []struct {
		name  string
		token string
	}{{"generated", ""}, {"given", "adm_given_by_operator"}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("APISTACK_ADMIN_TOKEN", tc.token)
			args := []string{"--data-dir", t.TempDir()}
			for _, f := range []string{"--pam-addr", "--fax-addr", "--storage-addr", "--restaurant-addr", "--admin-addr"} {
				args = append(args, f, "127.0.0.1:0")
			}
			ctx, cancel := context.WithCancel(context.Background())
			stdout := &safebuf.Buffer{}
			done := make(chan error, 1)
			go func() { done <- serve(ctx, args, stdout, io.Discard) }()
			require.Eventually(t, func() bool { return strings.Contains(stdout.String(), "admin token:") }, 60*time.Second, 20*time.Millisecond)
			cancel()
			require.NoError(t, <-done)
			line := stdout.String()
			if tc.token == "" {
				assert.Regexp(t, `admin token: adm_\S+`, line)
			} else {
				assert.NotContains(t, line, tc.token)
			}
		})
	}
}
