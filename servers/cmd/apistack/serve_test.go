package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/safebuf"
)

// startServe runs `apistack serve --demo` on free loopback ports until the
// returned stop is called, and returns the credentials file it wrote.
// Extra arguments follow the test's own (a flag given twice takes its last
// value).
func startServe(t *testing.T, dataDir string, extra ...string) (creds map[string]map[string]string, stdout *safebuf.Buffer, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr := &safebuf.Buffer{}, &safebuf.Buffer{}
	args := []string{"--demo", "--data-dir", dataDir}
	for _, f := range []string{"--pam-addr", "--fax-addr", "--storage-addr", "--restaurant-addr", "--admin-addr"} {
		args = append(args, f, "127.0.0.1:0")
	}
	args = append(knownFlags(args), extra...)
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

	req, _ := http.NewRequest(http.MethodGet, pam["base_url"]+"/v1/teams/demo/groups", nil)
	req.Header.Set("Authorization", "Bearer "+tok.BearerToken)
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	groups, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(groups), `"demo-admins"`)

	// The admin CLI reaches the admin API with the credentials file (the
	// README's pam-create-team; create-team is its earlier name).
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

func TestAdminCLI_PAMAndRestaurantCommands(t *testing.T) {
	dataDir := t.TempDir()
	creds, _, stop := startServe(t, dataDir)
	defer func() { require.NoError(t, stop()) }()
	run := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := adminCommand(context.Background(), append([]string{"--data-dir", dataDir}, args...), &out, io.Discard)
		return out.String(), err
	}

	out, err := run("create-user", "demo", "alice")
	require.NoError(t, err)
	assert.Contains(t, out, `"alice"`)

	out, err = run("quotas", "--groups", "5", "demo")
	require.NoError(t, err)
	assert.Contains(t, out, `"groups": 5`)
	out, err = run("quotas", "demo")
	require.NoError(t, err)
	assert.Contains(t, out, `"groups": 5`)

	// Maintenance mode answers every PAM call with 503 service_offline.
	_, err = run("maintenance", "on")
	require.NoError(t, err)
	resp, err := http.Post(creds["pam"]["base_url"]+"/v1/teams/demo/service_token", "application/json", strings.NewReader(`{"key_id":"x","key_secret":"y"}`))
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Contains(t, string(body), "service_offline")
	out, err = run("maintenance")
	require.NoError(t, err)
	assert.Contains(t, out, `"offline": true`)
	_, err = run("maintenance", "off")
	require.NoError(t, err)

	if _, ok := creds["restaurant"]; !ok {
		return
	}
	guid := "0f8d4b0e-1c7a-4c55-9f1e-6b2f3a9d8e71"
	_, err = run("restaurant-create", "Corner Cafe", guid)
	require.NoError(t, err)
	out, err = run("restaurant-create-client", "kiosk", guid)
	require.NoError(t, err)
	assert.Contains(t, out, `"clientSecret"`)
	out, err = run("restaurant-demo", guid, "25")
	require.NoError(t, err)
	assert.Contains(t, out, `"menuItems": 25`)
	out, err = run("restaurant-get", guid)
	require.NoError(t, err)
	assert.Contains(t, out, "Corner Cafe")
	_, err = run("restaurant-archive", guid, "menuItems", "11111111-2222-4333-8444-555555555555")
	assert.ErrorContains(t, err, "404", "archiving an entity that does not exist")
}
