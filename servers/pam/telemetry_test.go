package pam_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/pamapi"
	"github.com/apistack/apistack/servers/internal/requestlog"
	"github.com/apistack/apistack/servers/internal/sqlitedb"
	"github.com/apistack/apistack/servers/internal/stacktest"
	"github.com/apistack/apistack/servers/internal/telemetry"
	"github.com/apistack/apistack/servers/internal/telemetry/telemetrytest"
	"github.com/apistack/apistack/servers/pam"
)

// TestTelemetry_RequestsAndRefusalsThroughTheGeneratedClient drives a PAM
// server with a small rate limit through the generated client and reads the
// request log and /metrics.
func TestTelemetry_RequestsAndRefusalsThroughTheGeneratedClient(t *testing.T) {
	ctx := context.Background()
	log := requestlog.New(0)
	tel := telemetry.New(log)
	db, err := sqlitedb.Open(ctx, filepath.Join(t.TempDir(), "pam.db"), pam.API.Migrations().SQLite)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	srv, err := pam.New(ctx, pam.Config{
		Deps: pam.Deps{DB: db, Telemetry: tel, ValidateResponses: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), OnResponseViolation: func(r *http.Request, status int, err error) {
			t.Errorf("response %d to %s %s breaks the spec: %v", status, r.Method, r.URL.Path, err)
		}},
		Settings: pam.Settings{RateLimit: 3, ExchangeFailures: 1},
	})
	require.NoError(t, err)
	url := stacktest.HTTP(t, srv)
	_, err = srv.Operator().CreateTeam(ctx, "acme")
	require.NoError(t, err)
	key, err := srv.Operator().BootstrapServiceUser(ctx, "acme", "root", "root-group", []string{"pam_admin"}, 0)
	require.NoError(t, err)
	api := newAPI(t, url)

	// The exchange spends one of the user's three requests; two lists, then
	// the bucket is empty.
	tok := bearer(issueToken(t, api, "acme", key.KeyID, key.KeySecret))
	for _, want := range []int{http.StatusOK, http.StatusOK, http.StatusTooManyRequests} {
		resp, err := api.ListGroupsWithResponse(ctx, "acme", nil, tok)
		require.NoError(t, err)
		require.Equal(t, want, resp.StatusCode(), string(resp.Body))
	}
	// One failed exchange is allowed per key id and per source: a second
	// source naming the key is refused for the key, the first source again
	// for itself.
	for _, tc := range []struct {
		source string
		want   int
	}{{"127.0.0.1", http.StatusUnauthorized}, {"127.0.0.2", http.StatusTooManyRequests}, {"127.0.0.1", http.StatusTooManyRequests}} {
		resp, err := apiFrom(t, url, tc.source).IssueServiceTokenWithResponse(ctx, "acme",
			pamapi.IssueServiceTokenJSONRequestBody{KeyId: key.KeyID, KeySecret: "wrong"})
		require.NoError(t, err)
		require.Equal(t, tc.want, resp.StatusCode(), string(resp.Body))
	}

	f := telemetrytest.ScrapeHandler(t, tel.Handler())
	for _, tt := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"apistack_http_requests_total", map[string]string{"api": "pam", "operation": "ListGroups", "status": "200"}, 2},
		{"apistack_http_requests_total", map[string]string{"api": "pam", "operation": "ListGroups", "status": "429"}, 1},
		{"apistack_http_requests_total", map[string]string{"api": "pam", "operation": "IssueServiceToken", "status": "200"}, 1},
		{"apistack_http_requests_total", map[string]string{"api": "pam", "operation": "IssueServiceToken", "status": "429"}, 2},
		{"apistack_http_request_duration_seconds", map[string]string{"api": "pam", "operation": "ListGroups"}, 3},
		{"apistack_rate_limit_refusals_total", map[string]string{"api": "pam", "limit": telemetry.LimitPrincipal}, 1},
		{"apistack_rate_limit_refusals_total", map[string]string{"api": "pam", "limit": telemetry.LimitExchangeKey}, 1},
		{"apistack_rate_limit_refusals_total", map[string]string{"api": "pam", "limit": telemetry.LimitExchangeSource}, 1},
		{"apistack_response_violations_total", nil, 0},
	} {
		assert.Equal(t, tt.want, f.Value(tt.name, tt.labels), "%s%v", tt.name, tt.labels)
	}

	entries := log.Recent(requestlog.Filter{API: "pam"})
	require.Len(t, entries, 7)
	newest := entries[0]
	assert.Equal(t, "IssueServiceToken", newest.Operation)
	assert.Equal(t, http.StatusTooManyRequests, newest.Status)
	assert.Equal(t, http.MethodPost, newest.Method)
	assert.Equal(t, "/v1/teams/acme/service_token", newest.Path)
	assert.Positive(t, newest.Latency)
	assert.WithinDuration(t, time.Now(), newest.Time, time.Minute)
	lists := log.Recent(requestlog.Filter{API: "pam", Operation: "ListGroups", MinStatus: 429, MaxStatus: 429})
	require.Len(t, lists, 1)
	assert.Equal(t, "/v1/teams/acme/groups", lists[0].Path)
}
