package fax

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/apistack/apistack/gen/faxapi"
)

// Every operation of an account spends from the account's one bucket: once
// it is empty, each answers 429 with Retry-After and the error body,
// whatever it would have answered otherwise (the ids below name nothing).
func TestRateLimit_EveryOperationAnswers429OnceTheBucketIsEmpty(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.RateLimit, c.RateLimitPeriod = 1, time.Minute })
	ctx := context.Background()
	fax, app, name := uuid.New(), uuid.NewString(), "renamed"
	ops := []struct {
		name string
		call func() (*http.Response, error)
	}{
		{"ListFaxApplications", func() (*http.Response, error) {
			r, err := h.api.ListFaxApplicationsWithResponse(ctx, nil)
			if err != nil {
				return nil, err
			}
			return r.HTTPResponse, nil
		}},
		{"CreateFaxApplication", func() (*http.Response, error) {
			r, err := h.api.CreateFaxApplicationWithResponse(ctx, faxapi.CreateFaxApplicationJSONRequestBody{
				ApplicationName: "limited", WebhookUrl: "https://example.com/hooks"})
			if err != nil {
				return nil, err
			}
			return r.HTTPResponse, nil
		}},
		{"GetFaxApplication", func() (*http.Response, error) {
			r, err := h.api.GetFaxApplicationWithResponse(ctx, app)
			if err != nil {
				return nil, err
			}
			return r.HTTPResponse, nil
		}},
		{"UpdateFaxApplication", func() (*http.Response, error) {
			r, err := h.api.UpdateFaxApplicationWithResponse(ctx, app, faxapi.UpdateFaxApplicationJSONRequestBody{ApplicationName: &name})
			if err != nil {
				return nil, err
			}
			return r.HTTPResponse, nil
		}},
		{"DeleteFaxApplication", func() (*http.Response, error) {
			r, err := h.api.DeleteFaxApplicationWithResponse(ctx, app)
			if err != nil {
				return nil, err
			}
			return r.HTTPResponse, nil
		}},
		{"GetFax", func() (*http.Response, error) {
			r, err := h.api.GetFaxWithResponse(ctx, fax)
			if err != nil {
				return nil, err
			}
			return r.HTTPResponse, nil
		}},
		{"CancelFax", func() (*http.Response, error) {
			r, err := h.api.CancelFaxWithResponse(ctx, fax)
			if err != nil {
				return nil, err
			}
			return r.HTTPResponse, nil
		}},
		{"RefreshFax", func() (*http.Response, error) {
			r, err := h.api.RefreshFaxWithResponse(ctx, fax)
			if err != nil {
				return nil, err
			}
			return r.HTTPResponse, nil
		}},
		{"DeleteFax", func() (*http.Response, error) {
			r, err := h.api.DeleteFaxWithResponse(ctx, fax)
			if err != nil {
				return nil, err
			}
			return r.HTTPResponse, nil
		}},
	}

	// The one request of the minute.
	first, err := h.api.ListFaxesWithResponse(ctx, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, first.StatusCode(), string(first.Body))

	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			resp, err := op.call()
			require.NoError(t, err)
			require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
			secs, err := strconv.Atoi(resp.Header.Get("Retry-After"))
			require.NoError(t, err, "Retry-After in seconds")
			assert.Positive(t, secs)
			assert.LessOrEqual(t, secs, 60)
		})
	}
}
