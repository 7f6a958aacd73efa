package telemetry_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/adminserver"
	"github.com/apistack/apistack/servers/internal/apiserver"
	"github.com/apistack/apistack/servers/internal/requestlog"
	"github.com/apistack/apistack/servers/internal/telemetry"
	"github.com/apistack/apistack/servers/internal/validation"
)

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
