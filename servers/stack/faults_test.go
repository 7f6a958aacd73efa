package stack_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/clients/storage/sigv4"
	"github.com/apistack/apistack/servers/stack"
)

// With its databases gone, every API answers 503 in its own error body with
// Retry-After: the server's state, temporary, not an unexpected error.
func TestFaults_ADatabaseUnavailableIs503WithRetryAfterOnEveryAPI(t *testing.T) {
	ctx := context.Background()
	st, err := stack.Open(ctx, stack.Config{DataDir: t.TempDir()})
	require.NoError(t, err)
	urls := serveHandlers(t, st)
	creds, err := st.Seed(ctx, stack.Credentials{}, stack.TenantSet{Name: stack.DemoSet, URLs: urls, SampleSize: 5})
	require.NoError(t, err)
	for _, api := range []string{stack.PAM, stack.Fax, stack.Restaurant, stack.Storage} {
		require.NoError(t, st.DB(api).Close())
	}
	t.Cleanup(func() { _ = st.Close() })

	do := func(method, url, body string, header http.Header) (int, http.Header, string) {
		req, err := http.NewRequest(method, url, strings.NewReader(body))
		require.NoError(t, err)
		for k, v := range header {
			req.Header[k] = v
		}
		if body != "" && req.Header.Get("Content-Type") == "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, resp.Header, string(b)
	}
	bearer := func(tok string) http.Header { return http.Header{"Authorization": {"Bearer " + tok}} }
	for _, tc := range []struct {
		api, method, url, body string
		header                 http.Header
		name                   string
	}{
		{"pam", http.MethodPost, urls[stack.PAM] + "/v1/teams/" + creds.PAM.Team + "/service_token",
			`{"key_id":"` + creds.PAM.KeyID + `","key_secret":"` + creds.PAM.KeySecret + `"}`, nil, `"service_offline"`},
		{"fax", http.MethodGet, urls[stack.Fax] + "/v2/faxes", "", bearer(creds.Fax.APIKey), `"service_unavailable"`},
		{"restaurant", http.MethodPost, urls[stack.Restaurant] + "/authentication/v1/authentication/login",
			`{"clientId":"` + creds.Restaurant.ClientID + `","clientSecret":"` + creds.Restaurant.ClientSecret + `","userAccessType":"PLATFORM_MACHINE_CLIENT"}`, nil, `"SERVICE_UNAVAILABLE"`},
		{"admin", http.MethodPost, urls[stack.Admin] + "/pam/teams", `{"name":"another"}`, bearer(st.AdminToken), `"unavailable"`},
		{"storage", http.MethodGet, urls[stack.Storage] + "/" + creds.Storage.Bucket + "?lifecycle=", "", signedGet(t, urls[stack.Storage], creds.Storage), "<Code>ServiceUnavailable</Code>"},
	} {
		status, header, body := do(tc.method, tc.url, tc.body, tc.header)
		assert.Equal(t, http.StatusServiceUnavailable, status, "%s: %s", tc.api, body)
		assert.Equal(t, "5", header.Get("Retry-After"), tc.api)
		assert.Contains(t, body, tc.name, tc.api)
		assert.NotContains(t, body, "database is closed", "%s: no internal detail", tc.api)
	}
}

// signedGet is the signed headers of a GET of the bucket's lifecycle.
func signedGet(t *testing.T, endpoint string, sc *stack.StorageCredentials) http.Header {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, endpoint+"/"+sc.Bucket+"?lifecycle=", nil)
	require.NoError(t, err)
	sum := sha256.Sum256(nil)
	hash := hex.EncodeToString(sum[:])
	now := time.Now().UTC()
	req.Header.Set("X-Cloud-Date", now.Format(sigv4.TimeFormat))
	req.Header.Set("X-Cloud-Content-Sha256", hash)
	signed := sigv4.HeadersToSign(req.Header)
	cr := sigv4.CanonicalRequest(req.Method, sigv4.CanonicalURI(req.URL.Path, false), sigv4.CanonicalQuery(req.URL.Query()),
		sigv4.CanonicalHeaders(req.Header, req.URL.Host, signed), strings.Join(signed, ";"), hash)
	scope := sigv4.Cloud4.Scope(now, sc.Region, "s3")
	sig := sigv4.Signature(sigv4.Cloud4.SigningKey(sc.Secret, now, sc.Region, "s3"), sigv4.Cloud4.StringToSign(now, scope, cr))
	req.Header.Set("Authorization", sigv4.Cloud4.AuthorizationHeader(sc.KeyID, scope, signed, sig))
	return req.Header
}
