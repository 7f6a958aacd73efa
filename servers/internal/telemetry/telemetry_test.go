package telemetry_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/adminserver"
	"github.com/apistack/apistack/servers/internal/apiserver"
	"github.com/apistack/apistack/servers/internal/requestlog"
	"github.com/apistack/apistack/servers/internal/telemetry"
	"github.com/apistack/apistack/servers/internal/telemetry/telemetrytest"
	"github.com/apistack/apistack/servers/internal/validation"
)

func scrape(t *testing.T, tel *telemetry.Telemetry) telemetrytest.Families {
	t.Helper()
	return telemetrytest.ScrapeHandler(t, tel.Handler())
}

func TestTelemetry_CountsWhatItIsToldInTheTextFormat(t *testing.T) {
	log := requestlog.New(0)
	tel := telemetry.New(log)
	// A second stack in the same process registers the same names in its own
	// registry: no collision, and nothing of one shows in the other.
	other := telemetry.New(nil)
	other.ObserveRequest(requestlog.Entry{API: "pam", Operation: "ListGroups", Status: 200})

	t0 := time.Now()
	tel.ObserveRequest(requestlog.Entry{ID: 1, Time: t0, API: "pam", Operation: "ListGroups", Status: 200, Latency: 2 * time.Millisecond})
	tel.ObserveRequest(requestlog.Entry{ID: 2, Time: t0, API: "pam", Operation: "ListGroups", Status: 200, Latency: 3 * time.Millisecond})
	tel.ObserveRequest(requestlog.Entry{ID: 3, Time: t0, API: "pam", Operation: "ListGroups", Status: 429, Latency: time.Millisecond})
	tel.ObserveRequest(requestlog.Entry{ID: 4, Time: t0, API: "fax", Status: 404, Latency: time.Millisecond})
	tel.ObserveRequest(requestlog.Entry{ID: 5, Time: t0, API: "fax", Operation: "GetFax", Status: 200, Violations: []string{"a"}})
	tel.ObserveViolations(requestlog.Entry{ID: 5, API: "fax", Operation: "GetFax", Violations: []string{"b", "c"}})
	tel.RateLimited("pam", telemetry.LimitPrincipal)
	tel.RateLimited("restaurant", telemetry.LimitPerSecond)
	tel.RateLimited("restaurant", telemetry.LimitPerSecond)
	tel.DeliveryAttempt(telemetry.OutcomeRefused)
	tel.DeliveryAttempt(telemetry.OutcomeDelivered)
	tel.SimulatorStep("sending")
	tel.WatchOutbox(func(context.Context) (int, error) { return 7, nil })

	f := scrape(t, tel)
	tests := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"apistack_http_requests_total", map[string]string{"api": "pam", "operation": "ListGroups", "status": "200"}, 2},
		{"apistack_http_requests_total", map[string]string{"api": "pam", "status": "429"}, 1},
		{"apistack_http_requests_total", map[string]string{"api": "fax", "operation": "", "status": "404"}, 1},
		{"apistack_http_request_duration_seconds", map[string]string{"api": "pam", "operation": "ListGroups"}, 3},
		{"apistack_response_violations_total", map[string]string{"api": "fax", "operation": "GetFax"}, 3},
		{"apistack_rate_limit_refusals_total", map[string]string{"api": "pam", "limit": "principal"}, 1},
		{"apistack_rate_limit_refusals_total", map[string]string{"api": "restaurant", "limit": "per_second"}, 2},
		{"apistack_fax_webhook_attempts_total", map[string]string{"outcome": "refused"}, 1},
		{"apistack_fax_webhook_attempts_total", map[string]string{"outcome": "delivered"}, 1},
		{"apistack_fax_simulator_steps_total", map[string]string{"status": "sending"}, 1},
		{"apistack_fax_webhook_outbox_depth", nil, 7},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, f.Value(tt.name, tt.labels), "%s%v", tt.name, tt.labels)
	}
	assert.Contains(t, f, "go_goroutines", "the Go runtime's metrics are exposed too")

	got := log.Recent(requestlog.Filter{API: "fax", ViolationsOnly: true})
	require.Len(t, got, 1)
	assert.Equal(t, []string{"a", "b", "c"}, got[0].Violations, "late violations reach the logged entry")
	assert.Len(t, log.Recent(requestlog.Filter{}), 5)

	assert.Equal(t, 1.0, scrape(t, other).Value("apistack_http_requests_total", nil))
}

func TestTelemetry_OutboxDepthIsNaNWhenItCannotBeRead(t *testing.T) {
	tel := telemetry.New(nil)
	assert.Equal(t, 0.0, scrape(t, tel).Value("apistack_fax_webhook_outbox_depth", nil), "no fax server: nothing waits")
	tel.WatchOutbox(func(context.Context) (int, error) { return 0, errors.New("database is closed") })
	assert.True(t, math.IsNaN(scrape(t, tel).Value("apistack_fax_webhook_outbox_depth", nil)))
}

func TestTelemetry_NilRecordsNothing(t *testing.T) {
	var tel *telemetry.Telemetry
	assert.Nil(t, tel.Observer())
	assert.Nil(t, tel.Log())
	assert.NotPanics(t, func() {
		tel.ObserveRequest(requestlog.Entry{API: "pam"})
		tel.ObserveViolations(requestlog.Entry{API: "pam", Violations: []string{"x"}})
		tel.RateLimited("pam", telemetry.LimitPrincipal)
		tel.DeliveryAttempt(telemetry.OutcomeError)
		tel.SimulatorStep("queued")
		tel.WatchOutbox(func(context.Context) (int, error) { return 1, nil })
	})
}

func TestScrape_RefusesWhatIsNotTheTextFormat(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	_, err := telemetrytest.Scrape(context.Background(), srv.Client(), srv.URL, nil)
	assert.ErrorContains(t, err, "not the text format")
}

// BenchmarkObserver measures what observing a request costs: the same
// small authenticated, validated request served without an observer and
// with a Telemetry feeding a request log.
func BenchmarkObserver(b *testing.B) {
	for _, bc := range []struct {
		name string
		tel  *telemetry.Telemetry
	}{
		{"none", nil},
		{"telemetry", telemetry.New(requestlog.New(0))},
	} {
		b.Run(bc.name, func(b *testing.B) {
			spec, err := adminserver.GetSpec()
			require.NoError(b, err)
			e, err := apiserver.New(apiserver.Config{
				Name: "admin",
				Validation: validation.Options{Spec: spec, Authenticate: func(_ context.Context, in *openapi3filter.AuthenticationInput) error {
					if in.RequestValidationInput.Request.Header.Get("Authorization") != "Bearer t" {
						return errors.New("wrong token")
					}
					return nil
				}},
				ErrorHandler: func(err error, c echo.Context) { _ = c.String(http.StatusInternalServerError, err.Error()) },
				Logger:       slog.New(slog.NewTextHandler(io.Discard, nil)),
				Observer:     bc.tel.Observer(),
			})
			require.NoError(b, err)
			e.GET("/storage/buckets", func(c echo.Context) error {
				return c.JSON(http.StatusOK, map[string]any{"buckets": []any{}})
			})
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodGet, "/storage/buckets", nil)
				req.Header.Set("Authorization", "Bearer t")
				rec := httptest.NewRecorder()
				e.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
			}
		})
	}
}
