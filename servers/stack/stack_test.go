package stack_test

import (
	"context"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/protocol/sigv4"
	"github.com/apistack/apistack/servers/fax"
	"github.com/apistack/apistack/servers/internal/stacktest"
	"github.com/apistack/apistack/servers/internal/testdb"
	"github.com/apistack/apistack/servers/stack"
	"github.com/apistack/apistack/servers/storage"
)

func TestOpen_NeedsADataDirOrAnOpener(t *testing.T) {
	_, err := stack.Open(context.Background(), stack.Config{})
	require.Error(t, err)
}

// A stack on a data directory keeps its tenants and keys across a restart,
// as `serve --demo` relies on; one from templates starts empty.
func TestOpen_DemoTenantsSurviveARestartOfTheDataDirectory(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	start := func(cfg stack.Config) (*stack.Stack, map[string]string) {
		st, err := stack.Open(ctx, cfg)
		require.NoError(t, err)
		urls := serveHandlers(t, st)
		st.Start(ctx)
		return st, urls
	}
	st, urls := start(stack.Config{DataDir: dir})
	first, err := st.Seed(ctx, stack.Credentials{}, stack.TenantSet{Name: stack.DemoSet, URLs: urls, SampleSize: 5})
	require.NoError(t, err)
	require.NoError(t, st.Close())

	st, urls = start(stack.Config{DataDir: dir})
	again, err := st.Seed(ctx, first, stack.TenantSet{Name: stack.DemoSet, URLs: urls, SampleSize: 5})
	require.NoError(t, err)
	require.NoError(t, st.Close())
	assert.Equal(t, first.PAM.KeyID, again.PAM.KeyID)
	assert.Equal(t, first.Fax.APIKey, again.Fax.APIKey)
	assert.Equal(t, first.Storage.Secret, again.Storage.Secret)
	assert.Equal(t, first.Restaurant.ClientID, again.Restaurant.ClientID)

	fresh, urls := start(stack.Config{DataDir: t.TempDir(), OpenDB: stack.OpenFromTemplates(t.TempDir(), t.TempDir())})
	defer fresh.Close()
	resp, err := http.Get(urls[stack.PAM] + "/healthz")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	_, err = fresh.PAM.Operator().CreateTeam(ctx, "demo")
	require.NoError(t, err, "a copy of the template has no team yet")
}

// The flags of every API's knobs read their tags, and the defaults a few
// packages also export as constants agree with them.
func TestSettings_FlagsShowTheDefaults(t *testing.T) {
	var s stack.Settings
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	s.RegisterFlags(fs)
	assert.Equal(t, fax.DefaultStepInterval, s.Fax.StepInterval)
	assert.Equal(t, storage.DefaultRegion, s.Storage.Region)
	assert.Equal(t, storage.DefaultDomain, s.Storage.Domain)
	assert.Equal(t, time.Hour, s.PAM.TokenTTL)
	assert.NotNil(t, fs.Lookup("fax-allow-private-destinations"), "a knob in a nested struct")
	require.NoError(t, fs.Parse([]string{"--fax-allow-private-destinations", "--restaurant-token-ttl", "2h"}))
	assert.True(t, s.Fax.Destinations.AllowPrivate)
	assert.Equal(t, 2*time.Hour, s.Restaurant.TokenTTL)
}

// On PostgreSQL every API's rate-limit buckets are an unlogged table: the
// spend each request makes writes no write-ahead log and its commit waits
// for no flush (docs/scaling-out.md, "Rate limits").
func TestOpen_RateLimitBucketsAreUnloggedOnPostgreSQL(t *testing.T) {
	if testdb.Current() != testdb.Postgres {
		t.Skip("PostgreSQL alone has unlogged tables (APISTACK_TEST_BACKEND=postgres)")
	}
	ctx := context.Background()
	st, err := stack.Open(ctx, stack.Config{DataDir: t.TempDir(), OpenDB: stacktest.OpenDB(t)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	for _, api := range []string{stack.PAM, stack.Fax, stack.Restaurant, stack.Sandbox} {
		var persistence string
		require.NoError(t, st.DB(api).QueryRowContext(ctx, `SELECT c.relpersistence FROM pg_class c
			JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE c.relname = 'rate_limits' AND n.nspname = current_schema()`).Scan(&persistence), api)
		assert.Equal(t, "u", persistence, "%s: rate_limits is unlogged", api)
	}
}

// serveHandlers serves each of st's handlers on a loopback port until the
// test ends, tells st its URLs and returns them by API name.
func serveHandlers(t *testing.T, st *stack.Stack) map[string]string {
	t.Helper()
	handlers, err := st.Handlers()
	require.NoError(t, err)
	urls := map[string]string{}
	for name, h := range handlers {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		urls[name] = srv.URL
	}
	require.NoError(t, st.SetURLs(urls))
	return urls
}

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
	sigv4.Cloud4.SignRequest(req, sigv4.EmptyPayloadHash, sigv4.Credentials{AccessKeyID: sc.KeyID, SecretAccessKey: sc.Secret},
		sc.Region, "s3", time.Now(), sigv4.Options{SignPayloadHash: true})
	return req.Header
}
