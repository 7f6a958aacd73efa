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

func TestRateLimit_EachAccountMakesAtMostItsRateThen429WithRetryAfter(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.RateLimit, c.RateLimitPeriod = 3, time.Minute })
	ctx := context.Background()
	for range 3 {
		resp, err := h.api.ListFaxesWithResponse(ctx, nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode(), string(resp.Body))
	}
	resp, err := h.api.ListFaxesWithResponse(ctx, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusTooManyRequests, resp.StatusCode(), string(resp.Body))
	assert.Equal(t, "20", resp.HTTPResponse.Header.Get("Retry-After"), "one request per 20 s")
	require.NotNil(t, resp.JSON429)
	require.Len(t, resp.JSON429.Errors, 1)
	assert.Equal(t, faxapi.TooManyRequestsErrorsErrorsCodeTooManyRequests, resp.JSON429.Errors[0].Code)
	assert.Contains(t, resp.JSON429.Errors[0].Detail, "3 requests per 1m0s")

	// A refused send sends nothing.
	send, err := h.api.SendFaxWithFormdataBodyWithResponse(ctx, faxapi.SendFaxFormdataRequestBody{
		To: "+13125550199", From: h.from, ConnectionId: h.app, MediaUrl: h.docs.URL + "/1.pdf"})
	require.NoError(t, err)
	require.Equal(t, http.StatusTooManyRequests, send.StatusCode(), string(send.Body))
	var n int
	require.NoError(t, h.srv.store.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM faxes`).Scan(&n))
	assert.Zero(t, n, "nothing was queued")

	// Another account has its own rate.
	_, key, _ := newSendingAccount(t, h.srv.Operator(), "other", "+13125550111", "http://127.0.0.1:9/")
	other := keyClient(t, h.url, key)
	resp, err = other.ListFaxesWithResponse(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode(), string(resp.Body))

	// The bucket refills with the account's time.
	h.clock.Advance(20 * time.Second)
	resp, err = h.api.ListFaxesWithResponse(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode(), string(resp.Body))
}

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
		{"ListFaxApplications", func() (*http.Response, error) { return h.api.ListFaxApplications(ctx, nil) }},
		{"CreateFaxApplication", func() (*http.Response, error) {
			return h.api.CreateFaxApplication(ctx, faxapi.CreateFaxApplicationJSONRequestBody{
				ApplicationName: "limited", WebhookUrl: "https://example.com/hooks"})
		}},
		{"GetFaxApplication", func() (*http.Response, error) { return h.api.GetFaxApplication(ctx, app) }},
		{"UpdateFaxApplication", func() (*http.Response, error) {
			return h.api.UpdateFaxApplication(ctx, app, faxapi.UpdateFaxApplicationJSONRequestBody{ApplicationName: &name})
		}},
		{"DeleteFaxApplication", func() (*http.Response, error) { return h.api.DeleteFaxApplication(ctx, app) }},
		{"GetFax", func() (*http.Response, error) { return h.api.GetFax(ctx, fax) }},
		{"CancelFax", func() (*http.Response, error) { return h.api.CancelFax(ctx, fax) }},
		{"RefreshFax", func() (*http.Response, error) { return h.api.RefreshFax(ctx, fax) }},
		{"DeleteFax", func() (*http.Response, error) { return h.api.DeleteFax(ctx, fax) }},
	}

	// The one request of the minute.
	first, err := h.api.ListFaxesWithResponse(ctx, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, first.StatusCode(), string(first.Body))

	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			resp, err := op.call()
			require.NoError(t, err)
			defer func() { _ = resp.Body.Close() }()
			require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
			secs, err := strconv.Atoi(resp.Header.Get("Retry-After"))
			require.NoError(t, err, "Retry-After in seconds")
			assert.Positive(t, secs)
			assert.LessOrEqual(t, secs, 60)
		})
	}
}
