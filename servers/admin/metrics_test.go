package admin_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/adminapi"
	"github.com/apistack/apistack/servers/admin"
	"github.com/apistack/apistack/servers/internal/requestlog"
	"github.com/apistack/apistack/servers/internal/telemetry"
	"github.com/apistack/apistack/servers/internal/telemetry/telemetrytest"
	"github.com/apistack/apistack/servers/pam/pamtest"
)

func metricsHandler(t *testing.T) http.Handler {
	t.Helper()
	env := pamtest.Start(t, pamtest.Options{})
	srv, err := admin.New(checked(t, admin.Config{PAM: env.Operator, Telemetry: telemetry.New(requestlog.New(0))}))
	require.NoError(t, err)
	h, err := srv.Handler()
	require.NoError(t, err)
	return h
}

func TestMetrics_ServedOnLoopbackAndCountTheAdminAPIsRequests(t *testing.T) {
	hs := httptest.NewServer(metricsHandler(t))
	t.Cleanup(hs.Close)
	api := adminClient(t, hs.URL)
	ctx := context.Background()
	scrape := func() telemetrytest.Families {
		t.Helper()
		f, err := telemetrytest.Scrape(ctx, hs.Client(), hs.URL+admin.MetricsPath, nil)
		require.NoError(t, err, "a loopback scraper needs no token")
		return f
	}
	created := map[string]string{"api": "admin", "operation": "CreatePAMTeam", "status": "201"}
	assert.Equal(t, 0.0, scrape().Value("apistack_http_requests_total", created))

	r, err := api.CreatePAMTeamWithResponse(ctx, adminapi.CreatePAMTeamJSONRequestBody{Name: "acme"})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, r.StatusCode(), string(r.Body))
	g, err := api.GetPAMTeamWithResponse(ctx, "nobody")
	require.NoError(t, err)
	require.Equal(t, http.StatusNotFound, g.StatusCode())

	f := scrape()
	assert.Equal(t, 1.0, f.Value("apistack_http_requests_total", created))
	assert.Equal(t, 1.0, f.Value("apistack_http_requests_total", map[string]string{"api": "admin", "operation": "GetPAMTeam", "status": "404"}))
	assert.Equal(t, 2.0, f.Value("apistack_http_requests_total", nil), "scrapes are not counted as requests")
}

func TestMetrics_OffLoopbackNeedTheAdminToken(t *testing.T) {
	h := metricsHandler(t)
	tests := []struct {
		name   string
		remote string
		method string
		header http.Header
		want   int
	}{
		{"loopback, no token", "127.0.0.1:40000", http.MethodGet, nil, http.StatusOK},
		{"IPv6 loopback, no token", "[::1]:40000", http.MethodGet, nil, http.StatusOK},
		{"remote, no token", "192.0.2.7:40000", http.MethodGet, nil, http.StatusUnauthorized},
		{"remote, wrong token", "192.0.2.7:40000", http.MethodGet, http.Header{"Authorization": {"Bearer wrong"}}, http.StatusUnauthorized},
		{"remote claiming loopback in a header", "192.0.2.7:40000", http.MethodGet,
			http.Header{"X-Forwarded-For": {"127.0.0.1"}, "X-Real-Ip": {"127.0.0.1"}}, http.StatusUnauthorized},
		{"remote, admin token", "192.0.2.7:40000", http.MethodGet, http.Header{"Authorization": {"Bearer " + adminToken}}, http.StatusOK},
		{"not a read", "127.0.0.1:40000", http.MethodPost, nil, http.StatusMethodNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(tt.method, admin.MetricsPath, nil)
			req.RemoteAddr = tt.remote
			for k, v := range tt.header {
				req.Header[k] = v
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			assert.Equal(t, tt.want, rec.Code, rec.Body.String())
			if tt.want == http.StatusOK {
				assert.Contains(t, rec.Body.String(), "# TYPE apistack_fax_webhook_outbox_depth gauge")
				return
			}
			var e adminapi.Error
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &e), "the admin API's error body")
			assert.Equal(t, tt.want, e.Code)
		})
	}
}
