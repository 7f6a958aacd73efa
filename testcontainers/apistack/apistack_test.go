package apistack_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/testcontainers/testcontainers-go"

	"github.com/apistack/apistack/testcontainers/apistack"
)

// testImage is the image the tests run: $APISTACK_IMAGE, or the one
// apistack's CI builds with `make image IMAGE=localhost/apistack:ci`.
func testImage() string {
	if img := os.Getenv("APISTACK_IMAGE"); img != "" {
		return img
	}
	return "localhost/apistack:ci"
}

// TestMain runs the tests only where a Docker-compatible engine answers
// (Docker, or podman's `podman system service` with DOCKER_HOST): without
// one they are skipped, except under CI=true, where they fail.
func TestMain(m *testing.M) {
	if err := engineAnswers(); err != nil {
		if os.Getenv("CI") == "true" {
			fmt.Fprintf(os.Stderr, "no container engine (CI=true): %v\n", err)
			os.Exit(1)
		}
		fmt.Printf("skipped: no Docker-compatible container engine answers (%v); see docs/testcontainers.md\n", err)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func engineAnswers() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	p, err := testcontainers.NewDockerProvider()
	if err != nil {
		return err
	}
	defer p.Close()
	return p.Health(context.Background())
}

func get(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// pamToken exchanges a PAM service user's key for a bearer token.
func pamToken(t *testing.T, pam apistack.PAMCredentials) string {
	t.Helper()
	body, err := json.Marshal(map[string]string{"key_id": pam.KeyID, "key_secret": pam.KeySecret})
	require.NoError(t, err)
	resp, err := http.Post(pam.BaseURL+"/v1/teams/"+pam.Team+"/service_token", "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var tok struct {
		BearerToken string `json:"bearer_token"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&tok))
	return tok.BearerToken
}

func TestRun_EveryAPIAnswersWithTheDemoCredentials(t *testing.T) {
	ctx := t.Context()
	c, err := apistack.Run(ctx, testImage())
	testcontainers.CleanupContainer(t, c)
	require.NoError(t, err)

	for api, base := range map[string]string{"pam": c.URLs.PAM, "fax": c.URLs.Fax, "storage": c.URLs.Storage,
		"restaurant": c.URLs.Restaurant, "admin": c.URLs.Admin} {
		status, body := get(t, base+"/readyz", "")
		assert.Equal(t, http.StatusOK, status, "%s /readyz: %s", api, body)
	}
	// The credentials point at the host's mapped ports and work.
	assert.Equal(t, c.URLs.PAM, c.Credentials.PAM.BaseURL)
	assert.Equal(t, c.URLs.Fax, c.Credentials.Fax.BaseURL)
	assert.Equal(t, c.URLs.Restaurant, c.Credentials.Restaurant.BaseURL)
	assert.Equal(t, c.URLs.Storage, c.Credentials.Storage.Endpoint)
	assert.Equal(t, c.URLs.Admin, c.Credentials.Admin.BaseURL)
	assert.Equal(t, c.URLs.Admin, c.Credentials.Sandboxes.BaseURL)
	for name, v := range map[string]string{"pam key": c.Credentials.PAM.KeySecret, "fax key": c.Credentials.Fax.APIKey,
		"storage secret": c.Credentials.Storage.Secret, "restaurant secret": c.Credentials.Restaurant.ClientSecret,
		"admin token": c.Credentials.Admin.Token, "creator token": c.Credentials.Sandboxes.Token} {
		assert.NotEmpty(t, v, name)
	}
	status, body := get(t, c.URLs.Fax+"/v2/fax_applications/"+c.Credentials.Fax.ConnectionID, c.Credentials.Fax.APIKey)
	assert.Equal(t, http.StatusOK, status, "the demo fax key reads its application: %s", body)
	status, body = get(t, c.URLs.Admin+"/pam/teams/"+c.Credentials.PAM.Team, c.Credentials.Admin.Token)
	assert.Equal(t, http.StatusOK, status, "the admin token reads the demo team: %s", body)
	status, _ = get(t, c.URLs.Fax+"/v2/fax_applications/"+c.Credentials.Fax.ConnectionID, "wrong-key")
	assert.Equal(t, http.StatusUnauthorized, status, "a wrong key is refused")
}

func TestWithFixture_CreatesASandboxFromTheDocument(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "fixture.yaml")
	require.NoError(t, os.WriteFile(good, []byte("pam:\n  groups:\n    - name: fx-group\n      roles: [end_user]\n"), 0o644))
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"pam": {"groups": [{"name": "fx-group", "roles": ["no_such_role"]}]}}`), 0o644))

	ctx := t.Context()
	c, err := apistack.Run(ctx, testImage(), apistack.WithFixture(good))
	testcontainers.CleanupContainer(t, c)
	require.NoError(t, err)
	require.NotNil(t, c.Sandbox)
	assert.True(t, strings.HasPrefix(c.Sandbox.ID, "sbx-"), c.Sandbox.ID)
	assert.NotEmpty(t, c.Sandbox.Token)
	assert.Equal(t, c.URLs.PAM, c.Sandbox.Credentials.PAM.BaseURL, "the sandbox's URLs are the host's")
	assert.NotEqual(t, c.Credentials.PAM.KeySecret, c.Sandbox.Credentials.PAM.KeySecret, "the sandbox has its own tenants")

	// The sandbox's token reads it; the group is in its team.
	status, body := get(t, c.URLs.Admin+"/sandboxes/"+c.Sandbox.ID, c.Sandbox.Token)
	assert.Equal(t, http.StatusOK, status, body)
	pam := c.Sandbox.Credentials.PAM
	token := pamToken(t, pam)
	status, body = get(t, pam.BaseURL+"/v1/teams/"+pam.Team+"/groups", token)
	assert.Equal(t, http.StatusOK, status, body)
	assert.Contains(t, body, `"fx-group"`)

	_, err = apistack.Run(ctx, testImage(), apistack.WithFixture(filepath.Join(dir, "missing.json")))
	require.Error(t, err, "a missing fixture fails before anything starts")

	c2, err := apistack.Run(ctx, testImage(), apistack.WithFixture(bad))
	testcontainers.CleanupContainer(t, c2)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "/pam/groups/0/roles/0", "the error names the fixture's pointer")
}
