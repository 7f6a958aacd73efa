package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/apiserver"
	"github.com/apistack/apistack/servers/internal/safebuf"
	"github.com/apistack/apistack/servers/internal/sqlitedb"
)

func TestServe_ABadFlagIsOneLineAndAPointerToHelp(t *testing.T) {
	for _, args := range [][]string{{"serve", "--no-such-flag"}, {"serve", "--read-timeout", "soon"}, {"conform", "--bogus"}, {"admin", "--bogus"}} {
		var stdout, stderr safebuf.Buffer
		err := run(context.Background(), args, &stdout, &stderr)
		require.Error(t, err, "%v", args)
		exitStatus(err, &stderr)
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		assert.Len(t, lines, 1, "%v: %q", args, stderr.String())
		assert.Contains(t, lines[0], "(see apistack "+args[0]+" -h)")
	}
	var stdout, stderr safebuf.Buffer
	require.Error(t, run(context.Background(), []string{"serve", "-h"}, &stdout, &stderr))
	assert.Greater(t, strings.Count(stderr.String(), "\n"), 40, "-h prints the whole usage")
}

func TestServe_ADatabaseErrorAtStartHasOnePrefixAndComesBeforeAnyListeningLine(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "master.key")
	require.NoError(t, os.WriteFile(keyFile, []byte(base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))), 0o600))
	t.Setenv("APISTACK_ADMIN_TOKEN", "a-token-long-enough-for-the-admin-api-0123456789")
	args := []string{"--database", "postgres://127.0.0.1:1/x?connect_timeout=2", "--master-key-file", keyFile, "--data-dir", t.TempDir()}
	for _, f := range []string{"--pam-addr", "--fax-addr", "--storage-addr", "--restaurant-addr", "--admin-addr"} {
		args = append(args, f, "127.0.0.1:0")
	}
	var stdout, stderr safebuf.Buffer
	err := serve(context.Background(), args, &stdout, &stderr)
	require.Error(t, err)
	assert.Equal(t, 1, strings.Count(err.Error(), "database:"), "one prefix: %v", err)
	assert.True(t, strings.HasPrefix(err.Error(), "pam database: "), err.Error())
	assert.NotContains(t, stderr.String(), "listening", "no port was announced")
	var out safebuf.Buffer
	exitStatus(err, &out)
	assert.Equal(t, 1, strings.Count(out.String(), "\n"), "reported on one line: %q", out.String())
}

func TestServe_RefusesAnEmptyFaxDatabaseWhoseKeyExists(t *testing.T) {
	dataDir := t.TempDir()
	creds, _, stop := startServe(t, dataDir)
	require.NotEmpty(t, creds["fax"])
	require.NoError(t, stop())
	faxDB := filepath.Join(dataDir, "fax.db")
	for _, suffix := range []string{"", "-wal", "-shm"} {
		_ = os.Remove(faxDB + suffix)
	}
	require.NoError(t, os.WriteFile(faxDB, nil, 0o600))

	args := []string{"--data-dir", dataDir}
	for _, f := range []string{"--pam-addr", "--fax-addr", "--storage-addr", "--restaurant-addr", "--admin-addr"} {
		args = append(args, f, "127.0.0.1:0")
	}
	var stdout, stderr safebuf.Buffer
	err := serve(context.Background(), args, &stdout, &stderr)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "\n", "one line")
	assert.Contains(t, err.Error(), faxDB+" is empty (0 bytes) but "+filepath.Join(dataDir, "fax-master.key"))
	assert.Contains(t, err.Error(), "restore "+faxDB+" from a backup")
}

func TestServe_ARestartWithoutDemoKeepsTheAdminTokenOfTheCredentialsFile(t *testing.T) {
	t.Setenv("APISTACK_ADMIN_TOKEN", "")
	dataDir := t.TempDir()
	creds, _, stop := startServe(t, dataDir)
	token := creds["admin"]["token"]
	require.NotEmpty(t, token)
	require.NoError(t, stop())

	args := []string{"--data-dir", dataDir}
	for _, f := range []string{"--pam-addr", "--fax-addr", "--storage-addr", "--restaurant-addr", "--admin-addr"} {
		args = append(args, f, "127.0.0.1:0")
	}
	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr := &safebuf.Buffer{}, &safebuf.Buffer{}
	done := make(chan error, 1)
	go func() { done <- serve(ctx, args, stdout, stderr) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()
	require.Eventually(t, func() bool { return strings.Contains(stdout.String(), "admin token:") }, 60*time.Second, 20*time.Millisecond)
	assert.Contains(t, stdout.String(), "admin token: the one in "+filepath.Join(dataDir, "demo-credentials.json"))
	assert.NotContains(t, stdout.String(), token, "a token already written down is not printed")
	// The admin API, on its new port, takes the token of the file.
	adminURL := regexp.MustCompile(`api=admin url=(\S+)`).FindStringSubmatch(stderr.String())
	require.Len(t, adminURL, 2, stderr.String())
	req, err := http.NewRequest(http.MethodGet, adminURL[1]+"/pam/maintenance", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

func TestReadyProbe_NotReadyWhileASQLiteDatabaseTakesNoWrites(t *testing.T) {
	ctx := context.Background()
	db, err := sqlitedb.Open(ctx, filepath.Join(t.TempDir(), "x.db"), fstest.MapFS{
		"00001_init.sql": {Data: []byte("-- +goose Up\nCREATE TABLE t (x INTEGER);\n")},
	})
	require.NoError(t, err)
	defer db.Close()
	readiness := apiserver.NewReadiness(readyProbe(func() []*sql.DB { return []*sql.DB{db} }, false))
	readiness.Start()
	require.NoError(t, readiness.Check(ctx))

	// Every write fails (as on a full disk), while a ping still answers.
	db.SetMaxOpenConns(1)
	_, err = db.ExecContext(ctx, "PRAGMA query_only = 1")
	require.NoError(t, err)
	require.NoError(t, db.PingContext(ctx))
	notReady := apiserver.NewReadiness(readyProbe(func() []*sql.DB { return []*sql.DB{db} }, false))
	notReady.Start()
	err = notReady.Check(ctx)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "takes no writes")
}
