package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/apiserver"
	"github.com/apistack/apistack/servers/internal/safebuf"
	"github.com/apistack/apistack/servers/internal/testkit"
)

// loopbackServeArgs returns serve's arguments for the data directory
// dataDir with every API on a free loopback port, followed by extra.
func loopbackServeArgs(dataDir string, extra ...string) []string {
	args := []string{"--data-dir", dataDir}
	for _, f := range []string{"--pam-addr", "--fax-addr", "--storage-addr", "--restaurant-addr", "--admin-addr"} {
		args = append(args, f, "127.0.0.1:0")
	}
	return append(args, extra...)
}

// startServe runs `apistack serve --demo` on free loopback ports until the
// returned stop is called, and returns the credentials file it wrote.
// Extra arguments follow the test's own (a flag given twice takes its last
// value).
func startServe(t *testing.T, dataDir string, extra ...string) (creds map[string]map[string]string, stdout *safebuf.Buffer, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr := &safebuf.Buffer{}, &safebuf.Buffer{}
	args := append(knownFlags(append([]string{"--demo"}, loopbackServeArgs(dataDir)...)), extra...)
	done := make(chan error, 1)
	go func() { done <- serve(ctx, args, stdout, stderr) }()

	path := filepath.Join(dataDir, "demo-credentials.json")
	require.Eventually(t, func() bool {
		return strings.Contains(stdout.String(), "apistack is running")
	}, 60*time.Second, 20*time.Millisecond, "serve did not start: %s", stderr.String())
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &creds))
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "the credentials file is private")
	return creds, stdout, func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(30 * time.Second):
			t.Fatal("serve did not shut down")
			return nil
		}
	}
}

// knownFlags keeps the address flags this build of serve knows, so the test
// runs whichever APIs are compiled in.
func knownFlags(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		if strings.HasSuffix(args[i], "-addr") && i+1 < len(args) {
			if _, err := parseServeFlags([]string{args[i], args[i+1]}, io.Discard); err != nil {
				i++
				continue
			}
			out = append(out, args[i], args[i+1])
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// sectionKeys is DESIGN.md section 5: the keys are a contract.
var sectionKeys = map[string][]string{
	"pam":        {"base_url", "key_id", "key_secret", "team"},
	"fax":        {"api_key", "base_url", "connection_id", "from", "webhook_public_key"},
	"storage":    {"bucket", "endpoint", "key_id", "region", "secret", "versioned_bucket"},
	"restaurant": {"base_url", "client_id", "client_secret", "restaurant_guid"},
	"admin":      {"base_url", "token"},
	"sandboxes":  {"base_url", "token"},
}

func TestServeDemo_WritesCredentialsThatWork(t *testing.T) {
	dataDir := t.TempDir()
	creds, stdout, stop := startServe(t, dataDir)

	require.Contains(t, creds, "pam")
	require.Contains(t, creds, "admin")
	for section, values := range creds {
		want, ok := sectionKeys[section]
		require.True(t, ok, "unexpected section %q", section)
		var got []string
		for k, v := range values {
			got = append(got, k)
			assert.NotEmpty(t, v, "%s.%s", section, k)
		}
		sort.Strings(got)
		assert.Equal(t, want, got, "keys of section %q", section)
	}

	// The printed token line works: exchange the demo key for a token.
	pam := creds["pam"]
	assert.Contains(t, stdout.String(), pam["base_url"]+"/v1/teams/demo/service_token")
	body, _ := json.Marshal(map[string]string{"key_id": pam["key_id"], "key_secret": pam["key_secret"]})
	resp, err := http.Post(pam["base_url"]+"/v1/teams/demo/service_token", "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	var tok struct {
		BearerToken string `json:"bearer_token"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&tok))
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	resp, groups := testkit.Request{Method: http.MethodGet, URL: pam["base_url"] + "/v1/teams/demo/groups", Token: tok.BearerToken}.Do(t)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(groups), `"demo-admins"`)

	// The admin CLI reaches the admin API with the credentials file (the
	// pam-create-team of docs/server.md; create-team is its earlier name).
	var out bytes.Buffer
	require.NoError(t, adminCommand(context.Background(), []string{"--data-dir", dataDir, "pam-create-team", "acme"}, &out, io.Discard))
	assert.Contains(t, out.String(), `"name": "acme"`)
	out.Reset()
	require.NoError(t, adminCommand(context.Background(), []string{"--data-dir", dataDir, "create-service-user", "acme", "bot", "ops", "pam_admin,security_admin"}, &out, io.Discard))
	assert.Contains(t, out.String(), `"key_secret"`)
	err = adminCommand(context.Background(), []string{"--data-dir", dataDir, "create-team", "acme"}, io.Discard, io.Discard)
	assert.ErrorContains(t, err, "409")

	// Every port serves health, its spec and docs.
	for section, values := range creds {
		base := values["base_url"]
		if base == "" {
			base = values["endpoint"]
		}
		for _, p := range []string{"/healthz", "/openapi.yaml", "/docs/"} {
			resp, err := http.Get(base + p)
			require.NoError(t, err, section+p)
			resp.Body.Close()
			assert.Equal(t, http.StatusOK, resp.StatusCode, section+p)
		}
	}

	require.NoError(t, stop(), "graceful shutdown")
	_, err = http.Get(pam["base_url"] + "/healthz")
	assert.Error(t, err, "the port is closed after shutdown")

	// A second --demo start is idempotent: the same tenants, the same working key.
	again, _, stop2 := startServe(t, dataDir)
	assert.Equal(t, pam["key_id"], again["pam"]["key_id"])
	assert.Equal(t, creds["admin"]["token"], again["admin"]["token"])
	require.NoError(t, stop2())
}

func TestServe_FlagsFallBackToEnvironment(t *testing.T) {
	t.Setenv("APISTACK_PAM_ADDR", "127.0.0.1:9999")
	t.Setenv("APISTACK_PAM_RATE_LIMIT", "42")
	c, err := parseServeFlags([]string{"--pam-rate-limit", "7"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:9999", c.PAMAddr, "from APISTACK_PAM_ADDR")
	assert.Equal(t, 7, c.APIs.PAM.RateLimit, "a flag wins over its variable")

	t.Setenv("APISTACK_PAM_RATE_LIMIT", "many")
	_, err = parseServeFlags(nil, io.Discard)
	assert.ErrorContains(t, err, "APISTACK_PAM_RATE_LIMIT")
}

func TestServe_RestaurantRateFlags(t *testing.T) {
	c, err := parseServeFlags(nil, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, 20, c.APIs.Restaurant.RatePerSecond, "the documented 20 per second by default")
	assert.Equal(t, 10000, c.APIs.Restaurant.RatePerWindow)
	assert.Equal(t, 15*time.Minute, c.APIs.Restaurant.RateWindow)

	c, err = parseServeFlags([]string{"--restaurant-rate-per-second", "5000", "--restaurant-rate-limit", "1000000", "--restaurant-rate-period", "1m"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, 5000, c.APIs.Restaurant.RatePerSecond)
	assert.Equal(t, 1000000, c.APIs.Restaurant.RatePerWindow)
	assert.Equal(t, time.Minute, c.APIs.Restaurant.RateWindow)
}

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
		assert.Contains(t, out, " creds --data-dir "+shellQuote(dataDir)+" "+s.path+")", "the second start reads %s from the file", s.path)
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
			args := loopbackServeArgs(t.TempDir())
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
	args := loopbackServeArgs(t.TempDir(), "--database", "postgres://127.0.0.1:1/x?connect_timeout=2", "--master-key-file", keyFile)
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

func TestServe_APortRefusesConnectionsUntilTheStackIsReady(t *testing.T) {
	addrs := freeAddrs(t, 5)
	args := []string{"--demo", "--data-dir", t.TempDir()}
	for i, f := range []string{"--pam-addr", "--fax-addr", "--storage-addr", "--restaurant-addr", "--admin-addr"} {
		args = append(args, f, addrs[i])
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr safebuf.Buffer
	done := make(chan error, 1)

	// Callers knock on every port throughout the start: each is refused,
	// or answered by the ready stack; none gets a 5xx.
	var refused, answered atomic.Int64
	var wrong safebuf.Buffer
	started := make(chan struct{})
	var knockers sync.WaitGroup
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}
	for _, addr := range addrs {
		for _, path := range []string{"/readyz", "/healthz", "/openapi.yaml"} {
			knockers.Add(1)
			go func() {
				defer knockers.Done()
				for {
					resp, err := client.Get("http://" + addr + path)
					switch {
					case err != nil && errors.Is(err, syscall.ECONNREFUSED):
						refused.Add(1)
					case err != nil:
						fmt.Fprintf(&wrong, "%s%s: %v\n", addr, path, err)
					default:
						_, _ = io.Copy(io.Discard, resp.Body)
						_ = resp.Body.Close()
						answered.Add(1)
						if resp.StatusCode != http.StatusOK {
							fmt.Fprintf(&wrong, "%s%s: %d during the start\n", addr, path, resp.StatusCode)
						}
					}
					select {
					case <-started:
						return
					default:
					}
				}
			}()
		}
	}
	go func() { done <- serve(ctx, args, &stdout, &stderr) }()
	require.Eventually(t, func() bool { return strings.Contains(stdout.String(), "apistack is running") },
		60*time.Second, 5*time.Millisecond, "serve did not start: %s", stderr.String())
	close(started)
	knockers.Wait()
	// Once it says it is running, every port answers ready.
	for _, addr := range addrs {
		resp, err := client.Get("http://" + addr + "/readyz")
		require.NoError(t, err)
		_ = resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, addr)
	}
	cancel()
	require.NoError(t, <-done)
	assert.Empty(t, wrong.String(), "every caller was refused or answered by the ready stack")
	assert.Positive(t, refused.Load(), "connections made during the start were refused")
	t.Logf("refused %d, answered %d", refused.Load(), answered.Load())
}

// emptyDatabase replaces the SQLite database at path (and its -wal and -shm
// files) with an empty file, as a lost or truncated database looks.
func emptyDatabase(t *testing.T, path string) {
	t.Helper()
	for _, suffix := range []string{"", "-wal", "-shm"} {
		_ = os.Remove(path + suffix)
	}
	require.NoError(t, os.WriteFile(path, nil, 0o600))
}

func TestServe_RefusesAnEmptyFaxDatabaseWhoseKeyExists(t *testing.T) {
	dataDir := t.TempDir()
	creds, _, stop := startServe(t, dataDir)
	require.NotEmpty(t, creds["fax"])
	require.NoError(t, stop())
	faxDB := filepath.Join(dataDir, "fax.db")
	emptyDatabase(t, faxDB)

	args := loopbackServeArgs(dataDir)
	var stdout, stderr safebuf.Buffer
	err := serve(context.Background(), args, &stdout, &stderr)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "\n", "one line")
	assert.Contains(t, err.Error(), faxDB+" is empty (0 bytes) but "+filepath.Join(dataDir, "fax-master.key"))
	assert.Contains(t, err.Error(), "restore "+faxDB+" from a backup")
}

func TestServe_RefusesAnEmptyDatabaseWithoutAKeyWhenTheStackRanThere(t *testing.T) {
	for _, api := range []string{"pam", "restaurant"} {
		t.Run(api, func(t *testing.T) {
			dataDir := t.TempDir()
			creds, _, stop := startServe(t, dataDir)
			require.NotEmpty(t, creds[api])
			require.NoError(t, stop())
			credsFile := filepath.Join(dataDir, "demo-credentials.json")
			before, err := os.ReadFile(credsFile)
			require.NoError(t, err)
			db := filepath.Join(dataDir, api+".db")
			emptyDatabase(t, db)

			args := loopbackServeArgs(dataDir)
			// A stack that started anyway is stopped after a while, so the
			// test fails rather than waits.
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var stdout, stderr safebuf.Buffer
			err = serve(ctx, args, &stdout, &stderr)
			require.Error(t, err)
			require.NoError(t, ctx.Err(), "serve refused to start; it did not run until stopped")
			assert.NotContains(t, err.Error(), "\n", "one line")
			assert.Contains(t, err.Error(), db+" is empty (0 bytes)")
			assert.Contains(t, err.Error(), "restore "+db+" from a backup")
			assert.NotContains(t, stderr.String(), "listening", "no port was announced")
			after, err := os.ReadFile(credsFile)
			require.NoError(t, err)
			assert.Equal(t, string(before), string(after), "the demo credentials are left as they were")
			info, err := os.Stat(db)
			require.NoError(t, err)
			assert.Zero(t, info.Size(), "the file is left as it was")
		})
	}
}

func TestServe_ARestartWithoutDemoKeepsTheAdminTokenOfTheCredentialsFile(t *testing.T) {
	t.Setenv("APISTACK_ADMIN_TOKEN", "")
	dataDir := t.TempDir()
	creds, _, stop := startServe(t, dataDir)
	token := creds["admin"]["token"]
	require.NotEmpty(t, token)
	require.NoError(t, stop())

	args := loopbackServeArgs(dataDir)
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
	resp, _ := testkit.Request{Method: http.MethodGet, URL: adminURL[1] + "/pam/maintenance", Token: token}.Do(t)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

func TestReadyProbe_NotReadyWhileASQLiteDatabaseTakesNoWrites(t *testing.T) {
	ctx := context.Background()
	db := testkit.SQLite(t)
	readiness := apiserver.NewReadiness(readyProbe(func() []*sql.DB { return []*sql.DB{db} }, false))
	readiness.Start()
	require.NoError(t, readiness.Check(ctx))

	// Every write fails (as on a full disk), while a ping still answers.
	testkit.RefuseWrites(t, db)
	notReady := apiserver.NewReadiness(readyProbe(func() []*sql.DB { return []*sql.DB{db} }, false))
	notReady.Start()
	err := notReady.Check(ctx)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "takes no writes")
}

// --cpu-profile (here through its variable) profiles the whole run: the file
// is a gzipped pprof profile once serve has stopped.
func TestServe_CPUProfileIsWrittenWhenServeStops(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	t.Setenv("APISTACK_CPU_PROFILE", path)
	_, _, stop := startServe(t, t.TempDir())
	require.NoError(t, stop())
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Greater(t, len(data), 2)
	assert.Equal(t, []byte{0x1f, 0x8b}, data[:2], "pprof profiles are gzipped")
}

func TestServeFlags_AdminAddrMustBeLoopbackUnlessAllowed(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:8089", "127.0.0.2:0", "[::1]:8089", "localhost:8089", "LOCALHOST:0"} {
		c, err := parseServeFlags([]string{"--admin-addr", addr}, io.Discard)
		require.NoError(t, err, addr)
		assert.Equal(t, addr, c.AdminAddr)
	}
	for _, addr := range []string{":8089", "0.0.0.0:8089", "[::]:8089", "192.0.2.10:8089", "admin.example.com:8089", "8089"} {
		_, err := parseServeFlags([]string{"--admin-addr", addr}, io.Discard)
		assert.Error(t, err, addr)
		if addr != "8089" {
			assert.ErrorContains(t, err, "--admin-allow-remote", addr)
		}
		c, err := parseServeFlags([]string{"--admin-addr", addr, "--admin-allow-remote"}, io.Discard)
		require.NoError(t, err, "%s with --admin-allow-remote", addr)
		assert.True(t, c.AdminAllowRemote)
	}

	t.Setenv("APISTACK_ADMIN_ADDR", "0.0.0.0:8089")
	_, err := parseServeFlags(nil, io.Discard)
	assert.Error(t, err, "from APISTACK_ADMIN_ADDR")
	t.Setenv("APISTACK_ADMIN_ALLOW_REMOTE", "true")
	_, err = parseServeFlags(nil, io.Discard)
	assert.NoError(t, err, "with APISTACK_ADMIN_ALLOW_REMOTE=true")
}

// serve itself refuses to start on a non-loopback admin address: it listens
// on no port.
func TestServe_RefusesARemoteAdminAddr(t *testing.T) {
	pamLn, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	pamAddr := pamLn.Addr().String()
	require.NoError(t, pamLn.Close())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = serve(ctx, []string{"--data-dir", t.TempDir(), "--pam-addr", pamAddr, "--admin-addr", "0.0.0.0:0"}, io.Discard, io.Discard)
	require.ErrorContains(t, err, "not on loopback")
	_, err = http.Get("http://" + pamAddr + "/healthz")
	assert.Error(t, err, "nothing listens")
}

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

func TestParseServeFlags_SandboxLimitsArePositive(t *testing.T) {
	for _, flag := range []string{"--max-sandboxes", "--sandbox-creates-per-minute", "--sandbox-journal-entries", "--sandbox-journal-bytes"} {
		for _, value := range []string{"0", "-3"} {
			t.Run(flag+"="+value, func(t *testing.T) {
				_, err := parseServeFlags([]string{flag, value}, io.Discard)
				require.Error(t, err)
				assert.Equal(t, flag+" "+value+": want a positive number (leave the flag out for its default)", err.Error())
			})
		}
		t.Run(flag+"=7", func(t *testing.T) {
			_, err := parseServeFlags([]string{flag, "7"}, io.Discard)
			require.NoError(t, err)
		})
	}
	c, err := parseServeFlags([]string{"--max-sandboxes", "7", "--sandbox-journal-bytes", "4096"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, 7, c.MaxSandboxes)
	assert.Equal(t, int64(4096), c.JournalBudget.Bytes)
}
