package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/servers/internal/telemetry/telemetrytest"
)

// TestServeDemo_MetricsOnTheAdminPortCountEveryAPI makes requests to the
// running stack and reads them back from the admin port's /metrics.
func TestServeDemo_MetricsOnTheAdminPortCountEveryAPI(t *testing.T) {
	t.Setenv("APISTACK_FAX_STEP_INTERVAL", "10ms")
	creds, _, stop := startServe(t, t.TempDir())
	defer func() { require.NoError(t, stop()) }()
	ctx := context.Background()

	p := creds["pam"]
	body := `{"key_id":"` + p["key_id"] + `","key_secret":"` + p["key_secret"] + `"}`
	resp, err := http.Post(p["base_url"]+"/v1/teams/"+p["team"]+"/service_token", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	resp, err = http.Get(creds["fax"]["base_url"] + "/v2/faxes")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)

	f, err := telemetrytest.Scrape(ctx, http.DefaultClient, creds["admin"]["base_url"]+"/metrics", nil)
	require.NoError(t, err)
	assert.Equal(t, 1.0, f.Value("apistack_http_requests_total", map[string]string{"api": "pam", "operation": "IssueServiceToken", "status": "200"}))
	assert.Equal(t, 1.0, f.Value("apistack_http_requests_total", map[string]string{"api": "fax", "operation": "ListFaxes", "status": "401"}))
	assert.Contains(t, f, "apistack_fax_webhook_outbox_depth")

	// Every port's docs page loads the spec with the port itself as its server.
	for _, api := range []string{"pam", "fax", "storage", "restaurant", "admin"} {
		base := creds[api]["base_url"]
		if base == "" {
			base = creds[api]["endpoint"]
		}
		resp, err := http.Get(base + "/docs/openapi.yaml")
		require.NoError(t, err, api)
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, api)
		doc, err := openapi3.NewLoader().LoadFromData(data)
		require.NoError(t, err, api)
		require.NotEmpty(t, doc.Servers, api)
		for _, s := range doc.Servers {
			assert.Equal(t, "/", s.URL, "%s: Try it out calls the port serving the page", api)
		}
	}
}
